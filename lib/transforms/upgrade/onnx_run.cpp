// ONNX 1.12's version converter, run on a model whose nodes bnorm converts
// itself are hidden (onnx_converter.cpp), and its failures in bnorm's words:
// the op and nodes it names, or the nodes that fail on their own, never
// ONNX's raw assertion text.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <map>
#include <regex>

#include "core/error.h"
#include "model/model.h"
#include "model/node_label.h"
#include "model/norm_op.h"
#include "model/onnx_guards.h"
#include "model/op_versions.h"
#include "transforms/upgrade/onnx_converter.h"
#include "transforms/upgrade/types.h"

namespace bnorm::upgrade_detail {

ConverterFailure read_converter_failure(const std::string& what) {
  ConverterFailure f;
  // "./onnx/version_converter/BaseConverter.h:63: adapter_lookup: Assertion `false` failed: No Adapter To Version $9 for MaxPool"
  std::string text = what;
  if (const auto at = text.find("failed: "); at != std::string::npos && text.find("Assertion") != std::string::npos) {
    text = text.substr(at + 8);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  static const std::regex no_adapter(R"(No Adapter (From|To) Version \$(\d+) for (\w+))");
  static const std::regex no_previous(R"(No (Previous|Next) Version (of|for) (\w+))");
  std::smatch m;
  if (std::regex_search(text, m, no_adapter)) {
    f.op = m[3];
    f.why = fmt::format("ONNX 1.12's converter has no adapter for {} {} version {}, and bnorm has no step for it",
                        f.op, m[1] == "From" ? "from" : "to", m[2].str());
  } else if (std::regex_search(text, m, no_previous)) {
    f.op = m[3];
    f.why = fmt::format("ONNX 1.12's converter knows no {} version of {}", m[1] == "Previous" ? "earlier" : "later", f.op);
  } else {
    f.why = fmt::format("ONNX 1.12's converter failed: {}", text);
  }
  return f;
}

namespace {

// The main-graph nodes that make ONNX's converter fail alone: each node
// whose op changes between `from` and `to`, converted in a model of its
// own (its inputs declared with their types, the constants it reads with
// it), in graph order; at most `most`.
std::vector<std::pair<int, std::string>> failing_nodes(const onnx::ModelProto& work, int64_t from, int64_t to,
                                                       size_t most) {
  const onnx::GraphProto& g = work.graph();
  std::map<std::string, const onnx::ValueInfoProto*> types;
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& v : *list) types.emplace(v.name(), &v);
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : g.initializer()) constants.emplace(t.name(), &t);
  std::vector<std::pair<int, std::string>> out;
  for (int i = 0; i < g.node_size() && out.size() < most; ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (!is_default_domain(n.domain()) || op_version_at(n.op_type(), from) == op_version_at(n.op_type(), to)) continue;
    onnx::ModelProto one;
    one.set_ir_version(work.ir_version());
    *one.mutable_opset_import() = work.opset_import();
    onnx::GraphProto& h = *one.mutable_graph();
    h.set_name("one");
    *h.add_node() = n;
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      if (auto c = constants.find(in); c != constants.end()) *h.add_initializer() = *c->second;
      auto* v = h.add_input();
      if (auto t = types.find(in); t != types.end()) *v = *t->second;
      v->set_name(in);
    }
    for (const auto& o : n.output()) {
      auto* v = h.add_output();
      if (auto t = types.find(o); t != types.end()) *v = *t->second;
      v->set_name(o);
    }
    try {
      onnx::version_conversion::ConvertVersion(one, static_cast<int>(to));
    } catch (const std::exception& e) {
      out.emplace_back(i, e.what());
    }
  }
  return out;
}

}  // namespace

onnx::ModelProto run_onnx_converter(const onnx::ModelProto& work, int64_t from, int64_t to) {
  install_onnx_inference_guards();  // the converter infers shapes first
  try {
    return onnx::version_conversion::ConvertVersion(work, static_cast<int>(to));
  } catch (const std::exception& e) {
    // Never ONNX's raw assertion text: the op, the nodes and why, in bnorm's words.
    const ConverterFailure f = read_converter_failure(e.what());
    std::vector<std::string> labels;
    const onnx::NodeProto* one = nullptr;
    for_each_graph(work.graph(), "main", [&](const onnx::GraphProto& g, const std::string& path) {
      for (int i = 0; i < g.node_size(); ++i) {
        if (f.op.empty() || g.node(i).op_type() != f.op || !is_default_domain(g.node(i).domain())) continue;
        labels.push_back(quoted_label(g.node(i), i, path));
        one = &g.node(i);
      }
    });
    if (f.op.empty()) {  // ONNX named no op: the nodes that fail alone
      for (const auto& [i, what] : failing_nodes(work, from, to, 6)) {
        labels.push_back(quoted_label(work.graph().node(i), i, "main"));
        one = &work.graph().node(i);
      }
    }
    std::string where;
    if (labels.size() > 1) {
      where = fmt::format(" ({} {}nodes: {}{})", labels.size(), f.op.empty() ? "" : f.op + " ",
                          fmt::join(labels.begin(), labels.begin() + std::min<size_t>(labels.size(), 5), ", "),
                          labels.size() > 5 ? ", ..." : "");
    }
    Error err(ErrorKind::unsupported, fmt::format("converting from opset {} to {}: {}{}", from, to, f.why, where));
    if (labels.size() == 1) err.at_node(node_label(*one), one->op_type(), op_version_at(one->op_type(), from));
    throw err.with_hint("try another target opset, or replace the op first");
  }
}

}  // namespace bnorm::upgrade_detail

#include "eval/backend_dir.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "eval/evaluator.h"
#include "model/model.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/tensor_file.h"

namespace fs = std::filesystem;

namespace bnorm {

bool BackendTestResult::pass() const {
  if (skipped) return true;
  if (!error.empty()) return false;
  for (const auto& ds : data_sets)
    for (const auto& o : ds.outputs)
      if (!o.diff.pass) return false;
  return true;
}

bool is_backend_test_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(dir / "model.onnx", ec);
}

std::vector<fs::path> find_backend_tests(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw Error(ErrorKind::input, fmt::format("'{}' is not a directory", root.string()));
  if (is_backend_test_dir(root)) return {root};
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(root)) {
    if (is_backend_test_dir(e.path())) out.push_back(e.path());
  }
  if (out.empty()) {
    Error e(ErrorKind::input, "holds no test folder (a folder with model.onnx and test_data_set_*)");
    e.in_file(root.string());
    throw e;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string first_unsupported_op(const fs::path& model_path) {
  const Model model = load_model(model_path);
  std::string missing;
  for (const auto* list : {&model.proto.graph().input(), &model.proto.graph().output()}) {
    for (const auto& v : *list) {
      if (!missing.empty() || !v.has_type()) continue;
      if (!v.type().has_tensor_type()) missing = "non-tensor value '" + v.name() + "'";
      else if (dtype_size(static_cast<DType>(v.type().tensor_type().elem_type())) == 0)
        missing = "non-tensor value '" + v.name() + "'";
    }
  }
  const int64_t opset = default_opset(model.proto);
  for_each_graph(model.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node()) {
      if (!missing.empty()) return;
      if (!is_default_domain(n.domain())) missing = n.domain() + "." + n.op_type();
      else if (!eval_supports(n.op_type(), opset)) {
        const int v = op_version_at(n.op_type(), opset);
        missing = v ? fmt::format("{}-{}", n.op_type(), v) : n.op_type();
      }
    }
  });
  return missing;
}

namespace {

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// ONNX's test data stores bfloat16 tensors as their uint16 bit patterns.
void as_bfloat16_if_declared(Tensor& t, DType declared) {
  if (declared == DType::bfloat16 && t.dtype == DType::uint16) t.dtype = DType::bfloat16;
}

}  // namespace

BackendTestResult run_backend_test(const fs::path& dir, const Tolerance& tol) {
  BackendTestResult r;
  r.dir = dir;
  r.name = dir.filename().string();
  const fs::path model_path = dir / "model.onnx";
  const std::string missing = first_unsupported_op(model_path);
  if (!missing.empty()) {
    r.skipped = true;
    r.skip_reason = (missing.rfind("non-tensor", 0) == 0 ? missing : "op " + missing) + " is not supported by bnorm eval";
    return r;
  }
  const Model model = load_model(model_path);
  std::set<std::string> initializers;
  for (const auto& t : model.proto.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> input_names, output_names;
  for (const auto& in : model.proto.graph().input())
    if (!initializers.count(in.name())) input_names.push_back(in.name());
  for (const auto& out : model.proto.graph().output()) output_names.push_back(out.name());

  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  for (const auto& set : sets) {
    DataSetResult ds;
    ds.name = set.filename().string();
    std::map<std::string, Tensor> inputs;
    const auto in_files = numbered(set, "input_");
    for (size_t i = 0; i < in_files.size() && i < input_names.size(); ++i) {
      Tensor t = read_tensor_file(in_files[i]);
      const auto& type = model.proto.graph().input().at(static_cast<int>(i)).type();
      if (type.has_tensor_type()) as_bfloat16_if_declared(t, static_cast<DType>(type.tensor_type().elem_type()));
      inputs[input_names[i]] = std::move(t);
    }
    const auto out_files = numbered(set, "output_");
    std::map<std::string, Tensor> actual;
    try {
      EvalOptions options;
      options.check_input_shapes = false;
      actual = evaluate(model, inputs, options);
    } catch (Error& e) {
      if (e.kind() == ErrorKind::unsupported) {
        // A case of a supported op that bnorm does not implement (Cast to
        // string, training-mode Dropout, ...): skipped, with the reason.
        r.skipped = true;
        r.skip_reason = e.message();
        r.data_sets.clear();
        return r;
      }
      e.in_file(model_path.string());
      throw;
    }
    for (size_t i = 0; i < out_files.size() && i < output_names.size(); ++i) {
      Tensor expected = read_tensor_file(out_files[i]);
      OutputResult o;
      o.name = output_names[i];
      auto it = actual.find(o.name);
      if (it != actual.end()) as_bfloat16_if_declared(expected, it->second.dtype);
      if (it == actual.end()) {
        o.diff.pass = false;
        o.diff.problem = "not produced";
      } else {
        o.diff = compare(expected, it->second, tol);
      }
      ds.outputs.push_back(std::move(o));
    }
    r.data_sets.push_back(std::move(ds));
  }
  return r;
}

}  // namespace bnorm

// Split 11/12 <-> 13: where the part sizes live.
//
//   Split-11: Split(X) axis split = [s1, s2, ..]   (attribute, optional)
//   Split-13: Split(X, split?) axis                (int64 input, optional)
//
// Up to 13: a `split` attribute becomes an int64 initializer input; none
// stays none (equal parts at both versions).
// Down below 13: a `split` input must be a constant (Error naming the node
// and the input otherwise) and becomes the attribute; an absent input stays
// absent. ONNX 1.12's Split 13 -> 12 adapter dereferences the absent input
// (a crash on every equal-parts Split), so bnorm converts Split itself in
// both directions. Formula: unchanged.
#include <fmt/format.h>

#include "core/error.h"
#include "model/node_label.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void split_convert(NormSite& s) {
  const int from = s.version, to = schema_version("Split", s.target_opset);
  onnx::NodeProto& n = s.node;
  std::optional<std::vector<int64_t>> sizes;
  if (from < 13) {
    if (const auto* a = find_attr(n, "split")) sizes = std::vector<int64_t>(a->ints().begin(), a->ints().end());
  } else if (n.input_size() > 1 && !n.input(1).empty()) {
    const std::string& name = n.input(1);
    const auto c = s.env->index->constant(*s.scope, name);
    if (!c) {
      throw Error(ErrorKind::unsupported,
                  fmt::format("input '{}' (split) is not a constant, so it cannot become an attribute below version 13",
                              name))
          .at_node(node_label(n), "Split", from);
    }
    std::vector<int64_t> v;
    for (double d : decode_tensor(*c->tensor).to_f64()) v.push_back(static_cast<int64_t>(d));
    sizes = v;
  }
  remove_attr(n, "split");
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  if (sizes && to < 13) {
    set_ints(n, "split", *sizes);
    s.report.set.push_back("split as an attribute");
  } else if (sizes) {
    n.add_input(s.add_int64s(s.stem() + "_split", *sizes));
    s.report.set.push_back(fmt::format("split as input '{}'", n.input(1)));
  }
  s.version = to;
}

namespace {

// Every change of Split up to 17 (2, 11, 13) in one step: a constant
// `split` input of Split-1 becomes the attribute, the part sizes move
// between attribute and input, negative axes are made non-negative below 11.
void split_to_target(NormSite& s) {
  split_1_2_up(s);
  split_convert(s);
  axis_11_normalize(s);
}

}  // namespace

const Step split{"split", "split_12_13", split_to_target, split_to_target};

}  // namespace bnorm::steps

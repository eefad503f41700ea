// BatchNormalization 9 <-> 14: `training_mode` added; the training outputs
// become Y, running_mean, running_var; mean/var may have their own type U.
//
//   Inference (one output): unchanged both ways.
//
//   Before (BN-9):  BN(X, scale, B, mean, var) -> Y, running_mean, running_var, saved_mean, saved_var
//   After  (BN-14): BN(X, scale, B, mean, var) training_mode=1 -> Y, running_mean, running_var
//                   saved_mean = ReduceMean(X, axes, keepdims=0)                    (only if used)
//                   saved_var  = ReduceMean((X - ReduceMean(X, axes))^2, axes, keepdims=0)  (only if used)
//   axes = every axis but 1, i.e. the batch mean and the population variance:
//   what bnorm's evaluator gives saved_mean and saved_var (docs/semantics.md).
//
// Preconditions: a used saved_mean or saved_var needs X's rank (from shape
// inference); without it the step fails naming the node and the output.
// Two to four outputs (invalid at 9) are read as training. Scalar
// parameters (C = 1) become [1]: BN-14's shape inference requires 1-D.
// Down (14 -> 9..13): training_mode = 1 -> the five-output form, saved_mean
// and saved_var added under new names, unused; training_mode = 0 -> one
// output. BN 9..13 has one type for all five inputs: they are cast to the
// widest of T and U (types.cpp); bfloat16 does not exist there (error).
#include <fmt/format.h>

#include "core/error.h"
#include "transforms/upgrade/steps/step.h"
#include "model/node_label.h"

namespace bnorm::steps {

namespace {

struct Plan {
  bool training = false;
  bool compute[2] = {false, false};  // saved_mean, saved_var are used
  std::vector<int64_t> axes;
};

Plan match_up(const NormSite& s) {
  const NormNode n = s.read();
  Plan p;
  p.training = n.training;
  if (!p.training) return p;
  for (int k = 0; k < 2; ++k) {
    const int o = 3 + k;
    p.compute[k] = o < s.node.output_size() && s.is_used(s.node.output(o));
    if (!p.compute[k]) continue;
    const auto rank = s.rank_of(s.node.input(0));
    if (!rank) {
      throw Error(ErrorKind::unsupported,
                  fmt::format("output {} '{}' ({}) is used, but BatchNormalization-14 has no such output and the "
                              "rank of X '{}' is unknown, so bnorm cannot compute it with added nodes",
                              o, s.node.output(o), k == 0 ? "saved_mean" : "saved_var", s.node.input(0)))
          .at_node(node_label(s.node), s.node.op_type(), s.version)
          .with_hint("give X a shape (value_info) or convert to opset 13 or lower, where the output exists");
    }
    p.axes = {0};
    for (int a = 2; a < *rank; ++a) p.axes.push_back(a);
  }
  return p;
}

void reduce_mean(NormSite& s, const std::string& in, const std::string& out, const std::vector<int64_t>& axes,
                 int keepdims) {
  auto& n = s.add_after("ReduceMean", {in}, {out});
  set_ints(n, "axes", axes);
  set_int(n, "keepdims", keepdims);
}

void compute_saved(NormSite& s, const Plan& p) {
  const std::string x = s.node.input(0);
  for (int k = 0; k < 2; ++k) {
    if (!p.compute[k]) continue;
    const std::string out = s.node.output(3 + k);
    s.node.set_output(3 + k, s.fresh(out + "_unused"));
    if (k == 0) {
      reduce_mean(s, x, out, p.axes, 0);
      continue;
    }
    const std::string mean = s.fresh(out + "_mean"), diff = s.fresh(out + "_diff"), sq = s.fresh(out + "_sq");
    reduce_mean(s, x, mean, p.axes, 1);
    s.add_after("Sub", {x, mean}, {diff});
    s.add_after("Mul", {diff, diff}, {sq});
    reduce_mean(s, sq, out, p.axes, 0);
  }
}

}  // namespace

void bn_9_14_up(NormSite& s) {
  const Plan p = match_up(s);
  // BN-14's shape inference wants 1-D parameters; BN-9 also took a scalar when C = 1.
  for (int i = 1; i < 5 && i < s.node.input_size(); ++i) {
    if (s.rank_of(s.node.input(i)) == 0) s.node.set_input(i, as_vector(s, s.node.input(i)));
  }
  if (!p.training) return;
  set_int(s.node, "training_mode", 1);
  s.report.set.push_back("training_mode = 1");
  compute_saved(s, p);
  if (s.node.output_size() > 3) {
    trim_outputs(s, 3, "BatchNormalization-14");
    s.report.dropped.push_back("outputs saved_mean, saved_var");
  }
}

void bn_9_14_down(NormSite& s) {
  refuse_bfloat16(s, 13);
  const NormNode n = s.read();
  unify_types(s, {{0, 1, 2, 3, 4}});
  if (remove_attr(s.node, "training_mode")) {
    s.report.dropped.push_back(fmt::format("training_mode = {}", n.training ? 1 : 0));
  }
  if (n.training) {
    pad_outputs(s, 5);
    s.report.set.push_back("outputs: the five-output training form");
  } else {
    trim_outputs(s, 1, "BatchNormalization-13 in inference");
  }
}

const Step bn_9_14{"bn_9_14", "bn_9_14", bn_9_14_up, bn_9_14_down};

}  // namespace bnorm::steps

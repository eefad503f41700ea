// bfloat16 through float: going down below the version where an op gained
// bfloat16, the node computes in float between Casts.
//
//   Before (e.g. InstanceNormalization-22):  x(bf16) s(bf16) b(bf16) -> IN -> y(bf16)
//   After  (InstanceNormalization-6 at the target):
//     Cast(x, float) Cast(s, float) Cast(b, float) -> IN -> y'(float) -> Cast(y', bfloat16) -> y
//
// The casts go in at the model's own opset (the node, now of float, then
// crosses its versions as any float node); an output nothing reads is
// renamed and not cast back.
//
// Preconditions: the op is in the list below (bfloat16 computed in float
// with one rounding per output element, LpNormalization aside), the
// target opset is 13 or more (bfloat16 exists from opset 13 on: Cast-13 is
// the first op with it), and the target version allows float where it
// lacks bfloat16. Which inputs and outputs: every one whose type parameter
// (at the node's own version) is bfloat16 on this node, where the target
// version lacks bfloat16; inputs of other types are left alone (BN-15's
// scale of float beside an X of bfloat16).
//
// Formula: bfloat16 -> float is exact, so the node sees the same numbers;
// it computes in float and its result is rounded once to bfloat16 by the
// Cast back, which is what the evaluator does for a bfloat16 node of the
// ops listed below (docs/semantics.md, "bfloat16 through float"), but for
// LpNormalization, whose evaluator rounds from float64 (see the list).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "transforms/upgrade/steps/step.h"
#include "transforms/upgrade/schema.h"

namespace bnorm::steps {

namespace {

// The ops that go through float, each with why the casts give the
// evaluator's result for its bfloat16 node; those that matter gained
// bfloat16 at a version >= 14 (so that a target >= 13 can lack it):
//   BatchNormalization (14), InstanceNormalization (22): float, one rounding
//     (eval/ops/nn/norm/batch_instance.cpp, kernels with float parameters);
//   LpNormalization (22): float64 with one rounding to the storage type
//     (eval/ops/nn/norm/local.cpp): the float result rounded again to
//     bfloat16 differs from one rounding only when it falls exactly on a
//     bfloat16 tie (at most one bfloat16 unit in the last place; listed as
//     the normalization family, docs/semantics.md says so);
//   LRN, MeanVarianceNormalization (13), GroupNormalization (18),
//     LayerNormalization (17): have bfloat16 at every version a target
//     >= 13 reaches, so never a site; listed with their family;
//   Elu, Selu, HardSigmoid, HardSwish, Softplus, Softsign, ThresholdedRelu
//     (22), LeakyRelu (16), Celu (28): the activation kernels, float for
//     bfloat16;
//   PRelu (16): slope * x in float;
//   Round (22): exact whatever the precision (a bfloat16 value rounded to
//     an integer is a bfloat16 value).
// Not listed: Sin, Cos, Tan, their inverses and hyperbolics, Mish (22):
// the evaluator computes them in float64 and rounds once, the casts would
// round twice; ops that reduce, pool, convolve, draw random numbers or
// take a `dtype` (Conv, pools, RNNs, Random*, EyeLike, ...): not elementwise.
constexpr const char* kThroughFloat[] = {
    "BatchNormalization", "Celu", "Elu",  "GroupNormalization", "HardSigmoid", "HardSwish", "InstanceNormalization",
    "LRN", "LayerNormalization", "LeakyRelu", "LpNormalization", "MeanVarianceNormalization", "PRelu",
    "Round", "Selu", "Softplus", "Softsign", "ThresholdedRelu",
};

constexpr const char* kBf16 = "tensor(bfloat16)";
constexpr const char* kFloat = "tensor(float)";

// The type parameter (or fixed type) of slot i; "" when there is none.
std::string slot_type(const std::vector<SchemaValue>& slots, int i) {
  if (i < static_cast<int>(slots.size())) return slots[i].type;
  return !slots.empty() && slots.back().variadic ? slots.back().type : "";
}

bool has(const std::vector<std::string>& v, const char* t) { return std::find(v.begin(), v.end(), t) != v.end(); }

}  // namespace

bool computes_bf16_in_float(const std::string& op) {
  return std::any_of(std::begin(kThroughFloat), std::end(kThroughFloat), [&](const char* o) { return op == o; });
}

Bf16Casts match_bf16_casts(const NormSite& s, const OpSchemaInfo& at, const OpSchemaInfo& target) {
  Bf16Casts c;
  if (!computes_bf16_in_float(s.node.op_type())) return c;
  // The type parameters this node instantiates with bfloat16.
  std::set<std::string> params;
  for (int side = 0; side < 2; ++side) {
    const bool input = side == 0;
    const auto& names = input ? s.node.input() : s.node.output();
    for (int i = 0; i < names.size(); ++i) {
      if (!names.Get(i).empty() && s.type_of(names.Get(i)) == DType::bfloat16) {
        params.insert(slot_type(input ? at.inputs : at.outputs, i));
      }
    }
  }
  params.erase("");
  if (params.empty()) return c;
  for (int side = 0; side < 2; ++side) {
    const bool input = side == 0;
    const auto& names = input ? s.node.input() : s.node.output();
    for (int i = 0; i < names.size(); ++i) {
      if (names.Get(i).empty() || !params.count(slot_type(input ? at.inputs : at.outputs, i))) continue;
      const std::vector<std::string> allowed = target.allowed(input, i);
      if (allowed.empty() || has(allowed, kBf16) || !has(allowed, kFloat)) continue;
      (input ? c.inputs : c.outputs).push_back(i);
    }
  }
  if (c.inputs.empty() && c.outputs.empty()) return c;
  if (s.target_opset < 13) {
    refuse(s, fmt::format("it computes in bfloat16, a type no op has before opset 13 (target: opset {}); {}-{} "
                          "would compute in float between Casts, but Cast has bfloat16 only from opset 13",
                          s.target_opset, target.op, target.version));
  }
  return c;
}

std::string describe_bf16_casts(const NormSite& s, const Bf16Casts& c, int target_version) {
  std::vector<std::string> ins, outs;
  for (int i : c.inputs) ins.push_back(fmt::format("'{}'", s.node.input(i)));
  for (int o : c.outputs) outs.push_back(fmt::format("'{}'", s.node.output(o)));
  std::string what = fmt::format("{}-{} has no bfloat16", s.node.op_type(), target_version);
  if (!ins.empty()) what += fmt::format("; input{} {} to float", ins.size() == 1 ? "" : "s", fmt::join(ins, ", "));
  if (!outs.empty()) {
    what += fmt::format("; output{} {} back to bfloat16", outs.size() == 1 ? "" : "s", fmt::join(outs, ", "));
  }
  return what;
}

void cast_bf16_through_float(NormSite& s, const Bf16Casts& c) {
  std::map<std::string, std::string> as_float;  // one Cast per value, however many inputs read it
  for (int i : c.inputs) {
    const std::string in = s.node.input(i);
    auto it = as_float.find(in);
    if (it == as_float.end()) {
      const std::string out = s.fresh(in + "_as_float");
      set_cast_to(s.add_before("Cast", {in}, {out}), s.target_opset, onnx::TensorProto::FLOAT);
      s.new_types[out] = DType::float32;
      it = as_float.emplace(in, out).first;
    }
    s.node.set_input(i, it->second);
  }
  for (int o : c.outputs) {
    const std::string name = s.node.output(o);
    const std::string inner = s.fresh(name + "_as_float");
    s.node.set_output(o, inner);
    s.new_types[inner] = DType::float32;
    if (!s.is_used(name)) continue;  // nothing reads it: renamed, no cast
    set_cast_to(s.add_after("Cast", {inner}, {name}), s.target_opset, onnx::TensorProto::BFLOAT16);
  }
}

}  // namespace bnorm::steps

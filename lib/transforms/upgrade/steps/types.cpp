// Making a node's types agree with an older schema.
//
// BN-15 has three type parameters (X: T, scale/B: T1, mean/var: T2),
// BN-14 two (X/scale/B: T, mean/var: U), BN 1..13 one. Going down, inputs
// that must share a type are cast to the widest type among them
// (float16 < float < double; float16 with bfloat16 -> float), so no input
// loses precision; outputs whose type changed are cast back to the type
// their consumers expect:
//
//   Before: X(f16) scale(bf16) ... -> BN -> Y(f16)
//   After:  Cast(X, float) Cast(scale, float) ... -> BN -> Cast(Y', f16) -> Y
//
// float16 and bfloat16 are exactly representable in float, and bnorm's
// evaluator normalizes 16-bit types in float with one rounding at the end,
// so the result is the same number. Types shape inference could not find
// are taken to agree (no cast).
#include <fmt/format.h>

#include "core/error.h"
#include "transforms/upgrade/steps/step.h"
#include "model/node_label.h"

namespace bnorm::steps {

namespace {

int width(DType t) {
  switch (t) {
    case DType::float16:
    case DType::bfloat16: return 16;
    case DType::float32: return 32;
    case DType::float64: return 64;
    default: return 0;
  }
}

DType widest(const std::vector<DType>& types) {
  DType best = types.front();
  for (DType t : types) {
    if (width(t) > width(best)) best = t;
    else if (width(t) == width(best) && t != best) best = DType::float32;  // float16 with bfloat16
  }
  return best;
}

// Which input's type each output had: Y follows X, the statistics follow mean/var.
constexpr int kOutputFollows[] = {0, 3, 4, 3, 4};

void cast_input(NormSite& s, int i, DType to) {
  const std::string in = s.node.input(i);
  const std::string out = s.fresh(in + "_as_" + dtype_name(to));
  set_cast_to(s.add_before("Cast", {in}, {out}), s.target_opset, static_cast<int32_t>(to));
  s.node.set_input(i, out);
  s.new_types[out] = to;
  s.new_ranks[out] = s.rank_of(in).value_or(-1);
  if (s.new_ranks[out] < 0) s.new_ranks.erase(out);
}

void cast_output_back(NormSite& s, int i, DType was, DType now) {
  const std::string name = s.node.output(i);
  const std::string inner = s.fresh(name + "_as_" + dtype_name(now));
  s.node.set_output(i, inner);
  if (!s.is_used(name)) return;  // nothing reads it: no cast, and no stale type under the old name
  set_cast_to(s.add_after("Cast", {inner}, {name}), s.target_opset, static_cast<int32_t>(was));
}

}  // namespace

void unify_types(NormSite& s, const std::vector<std::vector<int>>& groups) {
  std::vector<std::optional<DType>> before(5);
  for (int i = 0; i < s.node.input_size() && i < 5; ++i) before[i] = s.type_of(s.node.input(i));
  std::vector<std::optional<DType>> after = before;
  for (const auto& group : groups) {
    std::vector<DType> known;
    for (int i : group) {
      if (i < s.node.input_size() && before[i]) known.push_back(*before[i]);
    }
    if (known.empty()) continue;
    const DType common = widest(known);
    for (int i : group) {
      if (i >= s.node.input_size() || !before[i] || *before[i] == common) continue;
      cast_input(s, i, common);
      after[i] = common;
      s.report.set.push_back(fmt::format("input {} cast from {} to {}", i, dtype_name(*before[i]), dtype_name(common)));
    }
  }
  for (int o = 0; o < s.node.output_size() && o < 5; ++o) {
    const int i = kOutputFollows[o];
    if (s.node.output(o).empty() || !before[i] || !after[i] || *before[i] == *after[i]) continue;
    cast_output_back(s, o, *before[i], *after[i]);
  }
}

void refuse_bfloat16(const NormSite& s, int target_version) {
  for (const auto& in : s.node.input()) {
    if (s.type_of(in) == DType::bfloat16) {
      throw Error(ErrorKind::unsupported,
                  fmt::format("input '{}' is bfloat16, a type {} does not have before version 14 (target: "
                              "version {})", in, s.node.op_type(), target_version))
          .at_node(node_label(s.node), s.node.op_type(), s.version)
          .with_hint("convert to opset 14 or later, or cast the model's bfloat16 tensors to float first");
    }
  }
}

}  // namespace bnorm::steps

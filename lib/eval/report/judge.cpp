// TracedValue::judge: one value of one data set judged by the compare
// criterion (trace.h), for --compare's outputs and --trace's values alike.
#include <cmath>
#include <limits>

#include "eval/report/trace.h"

namespace bnorm {

const char* criterion_name(Criterion c) {
  switch (c) {
    case Criterion::fixed: return "fixed";
    case Criterion::rounding: return "rounding";
    case Criterion::scaled: return "scaled";
  }
  return "fixed";
}

Tolerance fixed_tolerance(const CompareCriterion& c, DType t) {
  Tolerance tol = model_compare_tolerance(t);
  if (c.rtol) tol.rtol = *c.rtol;
  if (c.atol) tol.atol = *c.atol;
  return tol;
}

void TracedValue::judge(const Tensor& a, const Tensor* a64, const Tensor& b, const CompareCriterion& c) {
  tol = fixed_tolerance(c, a.dtype);
  ValueDiff d = diff_values(a, b, tol);
  const bool shapes_agree = d.diff.problem.empty();
  if (criterion == Criterion::rounding && a64) {
    RoundingDiff r = judge_rounding(a, *a64, b);
    d.diff.pass = r.pass && shapes_agree;
    d.worst = r.worst;
    d.diff.mismatches = r.outside;
    rounding = std::move(r);
  } else if (criterion == Criterion::scaled) {
    ScaledDiff s = judge_scaled(a, b, c.stat, c.rel ? *c.rel : scaled_tolerance(a.dtype));
    const double got = s.problem.empty() ? stat_of(s.error, s.stat) : 0;
    d.diff.pass = s.pass && shapes_agree;
    d.worst = !s.problem.empty() || s.outside ? std::numeric_limits<double>::infinity()
              : got == 0                      ? 0
              : s.allowed > 0                 ? got / s.allowed
                                              : std::numeric_limits<double>::infinity();
    d.diff.mismatches = s.outside;
    scaled = std::move(s);
  }
  diff = std::move(d);
}

void TracedValue::merge(const TracedValue& set) {
  diff.merge(set.diff);
  rounding.merge(set.rounding);
  scaled.merge(set.scaled);
  if (set.codes) {
    if (codes) codes->merge(*set.codes);
    else codes = set.codes;
  }
}

}  // namespace bnorm

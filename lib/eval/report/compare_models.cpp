// Two models compared on input sets (compare_models.h).
#include "eval/report/compare_models.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "eval/run/evaluator.h"

namespace bnorm {

TraceResult compare_models(const Model& a, const Model& b, const std::vector<std::map<std::string, Tensor>>& sets,
                           const TraceOptions& options, const std::string& a_name, const std::string& b_name,
                           bool every_value) {
  const CompareCriterion& criterion = options.criterion;
  TraceResult r;
  if (!criterion.fixed || every_value) {
    // Every value both models compute is judged: an error below A's own
    // rounding at the outputs is still seen where it enters.
    Tracer tracer(a, b, options);
    for (const auto& inputs : sets) tracer.run(inputs);
    r = tracer.result();
    for (const auto& out : a.proto.graph().output()) {
      const bool found = std::any_of(r.values.begin(), r.values.end(), [&](auto& v) { return v.name == out.name(); });
      if (!found) throw Error(ErrorKind::input, fmt::format("output '{}' has no counterpart in '{}'", out.name(), b_name));
    }
    return r;
  }
  const auto& outs_a = a.proto.graph().output();
  const auto& outs_b = b.proto.graph().output();
  for (const auto& inputs : sets) {
    std::map<std::string, Tensor> ya, yb;
    try {
      ya = evaluate(a, inputs);
    } catch (Error& e) {
      e.in_file(a_name).context(options.a_role);
      if (!options.a_hint.empty() && e.hint().empty()) e.with_hint(options.a_hint);
      throw;
    }
    try {
      yb = evaluate(b, inputs);
    } catch (Error& e) {
      e.in_file(b_name).context(options.b_role);
      throw;
    }
    for (int i = 0; i < outs_a.size(); ++i) {
      const std::string& name = outs_a[i].name();
      std::string other = name;
      if (!yb.count(other) && i < outs_b.size()) other = outs_b[i].name();
      if (!ya.count(name) || !yb.count(other)) {
        throw Error(ErrorKind::input, fmt::format("output '{}' has no counterpart in '{}'", name, b_name));
      }
      const bool first = static_cast<int>(r.values.size()) <= i;
      if (first) {
        TracedValue v;
        v.name = name;
        v.name_b = other;
        v.order = i;
        v.output = true;
        v.dtype = ya[name].dtype;
        v.dims = ya[name].dims;
        v.judge(ya[name], nullptr, yb[other], criterion);
        r.values.push_back(std::move(v));
      } else {
        TracedValue set;
        set.judge(ya[name], nullptr, yb[other], criterion);
        r.values[i].merge(set);
      }
    }
    ++r.data_sets;
  }
  for (size_t i = 0; i < r.values.size() && r.first < 0; ++i)
    if (!r.values[i].diff.diff.pass) r.first = static_cast<int>(i);
  return r;
}

}  // namespace bnorm

#include "transforms/upgrade/verify.h"

#include <fmt/format.h>

#include "core/error.h"
#include "eval/report/compare.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"

namespace bnorm {

std::vector<UpgradeCheck> verify_upgrade(const Model& before, const Model& after, uint64_t seed,
                                         const std::map<std::string, int64_t>& dims, const InputRanges& ranges) {
  const auto inputs = random_inputs(before, seed, dims, {}, ranges);
  std::map<std::string, Tensor> a, b;
  try {
    a = evaluate(before, inputs, {});
  } catch (Error& e) {
    e.context("while running the input model for --verify");
    throw;
  }
  try {
    b = evaluate(after, inputs, {});
  } catch (Error& e) {
    e.context("while running the converted model for --verify");
    throw;
  }
  std::vector<UpgradeCheck> out;
  for (const auto& [name, t] : a) {
    UpgradeCheck c;
    c.output = name;
    c.type = dtype_name(t.dtype);
    c.shape = t.dims;
    const auto it = b.find(name);
    if (it == b.end()) {
      c.pass = false;
      c.problem = "the converted model has no such output";
    } else {
      const Diff d = compare(t, it->second, model_compare_tolerance(t.dtype));
      c.pass = d.pass;
      c.max_abs = d.max_abs;
      c.max_rel = d.max_rel;
      c.problem = d.problem;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace bnorm

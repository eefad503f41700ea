// bnorm upgrade --verify: the original and the converted model run through
// the evaluator on the same seeded random inputs (eval/run/random_inputs.h);
// every graph output is compared within model_compare_tolerance
// (eval/report/compare.h), as fold --verify does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eval/run/random_inputs.h"
#include "model/model.h"

namespace bnorm {

struct UpgradeCheck {
  std::string output;
  std::string type;
  std::vector<int64_t> shape;
  double max_abs = 0, max_rel = 0;
  bool pass = true;
  std::string problem;  // type or shape disagreement, or an output missing from the converted model
};

// One check per graph output of `before`. Throws Error when a model cannot
// be evaluated (an op the evaluator does not run, a symbolic dim without a
// value in `dims`): nothing can be said then.
std::vector<UpgradeCheck> verify_upgrade(const Model& before, const Model& after, uint64_t seed,
                                         const std::map<std::string, int64_t>& dims, const InputRanges& ranges = {});

}  // namespace bnorm

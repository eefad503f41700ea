// bnorm upgrade --verify: the original and the converted model run through
// the evaluator on the same inputs (given, else seeded random data:
// eval/run/random_inputs.h) and the converted one is judged against the
// original by bnorm eval --compare's default criterion (compare_models.h):
// every value both compute, within the original's own rounding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eval/report/trace.h"
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

struct UpgradeVerification {
  std::vector<UpgradeCheck> outputs;  // one per graph output of `before`
  TraceResult compared;               // every shared value, judged
  bool pass() const;
};

// Throws Error when a model cannot be evaluated (an op the evaluator does
// not run, a symbolic dim without a value, inputs the input model cannot
// run on: the error says it is the input model, and how to give inputs).
UpgradeVerification verify_upgrade(const Model& before, const Model& after, const VerifyInputs& inputs);

// The hint of an error of the input model's run under --verify.
extern const char* const kVerifyInputsHint;

}  // namespace bnorm

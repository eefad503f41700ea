// Running a model, and comparing two: `bnorm eval` (docs/cli.md), every op
// under the semantics of the version the model's opset selects.
#pragma once

#include <bnorm/model.h>
#include <bnorm/report.h>
#include <bnorm/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bnorm::api {

// The model's graph outputs for `inputs` (by graph input name; every input
// without an initializer must be given). Throws Error naming the node.
std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs);

// Seeded random data for every graph input not in `given` (floats uniform in
// [-1, 1), integers 0..3, bool 0/1; integer indices, sizes and shapes valid
// for the node that reads them; an input in `ranges` from its range),
// `dims` sizing symbolic dims; the same seed gives the same data as
// `bnorm eval --random SEED` (docs/cli.md, "Random inputs").
std::map<std::string, Tensor> make_inputs(const Model& model, uint64_t seed,
                                          const std::map<std::string, int64_t>& dims = {},
                                          const std::map<std::string, Tensor>& given = {},
                                          const std::map<std::string, InputRange>& ranges = {});

struct CompareRequest {
  // The inputs both models run on (random from `seed` for those not given).
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;
  std::map<std::string, InputRange> ranges;  // the values of random inputs by name (--input-range)
  bool trace = false;  // every value both compute, and the first divergence
  // How outputs are judged (docs/cli.md, --tolerance): "" or "auto" against
  // A's own rounding (A's float64 evaluation; where A has none, relative
  // to each output's magnitude by `error_stat`: median, p90, p99, max or
  // mean); "fixed" element by element within rtol/atol (also when either
  // is set and tolerance is "").
  std::string tolerance;
  std::optional<double> rtol, atol;
  std::string error_stat = "max";
  std::optional<std::string> a, b;  // what the report's "a" and "b" say
};

// Runs both models on the same inputs and compares their outputs (by name,
// else position): the bnorm.eval-compare/2 report, exit_code 1 when they differ.
Report compare(const Model& a, const Model& b, const CompareRequest& request = {});

}  // namespace bnorm::api

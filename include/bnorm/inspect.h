// What is in a model and what the other commands would do to it:
// `bnorm inspect` (docs/cli.md), as a report (bnorm.inspect/1).
#pragma once

#include <bnorm/model.h>
#include <bnorm/report.h>
#include <bnorm/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace bnorm::api {

struct InspectRequest {
  std::optional<int64_t> to;  // the pre-flight of an upgrade to this opset (upgrade_plan)
  bool fp16 = false;          // the float16 risks of the normalization nodes (fp16_risks)
  bool shapes = false;        // every value's inferred type and shape (value_shapes)
  // With fp16: measure the inputs of the normalization nodes on these
  // inputs, the others random from `seed` when it is given; `dims` sizes
  // the inputs' symbolic dims.
  std::map<std::string, Tensor> inputs;
  std::optional<uint64_t> seed;
  std::map<std::string, int64_t> dims;
  std::map<std::string, InputRange> ranges;  // the values of random inputs by name (--input-range)
  std::optional<std::string> file;  // what the report's "file" says (null when not given)
};

Report inspect(const Model& model, const InspectRequest& request = {});

}  // namespace bnorm::api

// Moving a whole model to another opset: `bnorm upgrade` (docs/cli.md,
// docs/upgrade.md), in place.
#pragma once

#include <bnorm/model.h>
#include <bnorm/report.h>
#include <bnorm/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace bnorm::api {

struct UpgradeRequest {
  int64_t to = 15;          // the target opset
  bool inference = false;   // training nodes become inference nodes
  bool casts = true;        // false: refuse bfloat16 nodes that would compute in float between Casts
  bool fuse_norms = false;  // decompositions become LayerNormalization, RMSNormalization, GroupNormalization
  bool check = true;        // ONNX's checker (<= 17) and bnorm's structural check on the result
  bool verify = false;      // run both models on the same inputs and judge every value (eval --compare's criterion)
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;  // symbolic input dims for verify
  std::map<std::string, InputRange> ranges;  // the values of verify's random inputs by name (--input-range)
  std::map<std::string, Tensor> inputs;      // verify's given inputs (--input); the others random
  std::vector<std::map<std::string, Tensor>> input_sets;  // verify's input sets instead (--inputs DIR)
  std::optional<std::string> input, output;  // what the report's "input" and "output" say
};

// Converts `model` in place and returns the bnorm.upgrade/1 report
// ("written" false). exit_code 1 when verify found an output off. Throws
// Error when a node cannot be converted (every such node in one message) or
// the result fails the check.
Report upgrade(Model& model, const UpgradeRequest& request = {});

}  // namespace bnorm::api

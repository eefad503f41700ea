// What a BatchNormalization or InstanceNormalization node means at the
// schema version in force: its attributes with each version's defaults,
// the legacy attributes present, and its mode (inference or training) with
// the reason. This is the one place that reads these attributes; the
// evaluator, the upgrade steps, the folder and the inspector all use it.
//
// Schema versions: BatchNormalization 1, 6, 7, 9, 14, 15;
// InstanceNormalization 1, 6. Defaults: epsilon 1e-5, momentum 0.9,
// is_test 0 (training!), spatial 1, training_mode 0.
//
// Mode, by version (see docs/semantics.md):
//   BN 1, 6     is_test = 1 -> inference; is_test = 0 or absent -> training
//   BN 7 .. 13  one output -> inference; more than one -> training (the
//               five-output form; two to four outputs are invalid and read
//               as training, with a warning)
//   BN 14, 15   training_mode (default 0)
//   IN          always per-instance statistics ("inference")
// Trailing outputs with empty names are absent outputs and do not count.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

namespace bnorm {

enum class NormKind { batch_norm, instance_norm };

struct NormNode {
  const onnx::NodeProto* node = nullptr;
  NormKind kind = NormKind::batch_norm;
  int version = 0;  // schema version in force

  float epsilon = 1e-5f;
  float momentum = 0.9f;
  bool spatial = true;                      // effective (BN < 9)
  std::optional<int64_t> is_test;           // as written (BN 1, 6)
  std::optional<int64_t> spatial_attr;      // as written (BN 1 .. 7)
  std::optional<int64_t> training_mode;     // as written (BN 14, 15)
  std::optional<std::vector<int64_t>> consumed_inputs;  // as written (BN 1, IN 1)
  bool epsilon_given = false, momentum_given = false;

  bool training = false;
  std::string mode_reason;       // "is_test = 1", "five outputs", ...
  int outputs = 1;               // present outputs (trailing empty names trimmed)
  std::vector<std::string> warnings;  // odd but readable: unknown attributes, invalid output counts

  std::string op_name() const;   // "BatchNormalization" / "InstanceNormalization"
  std::string label() const;     // "BatchNormalization-9"
};

bool is_default_domain(const std::string& domain);
// BatchNormalization or InstanceNormalization in the default domain.
bool is_norm_node(const onnx::NodeProto& node);
// The schema version in force for `op` at `opset`: the newest version not
// above opset (0 when op is not BN/IN).
int norm_schema_version(const std::string& op, int64_t opset);
// The versions that exist: {1, 6, 7, 9, 14, 15} or {1, 6}.
const std::vector<int>& norm_versions(NormKind kind);

// Reads `node` at `opset`. Throws Error(input) (with the node) when an
// attribute has the wrong type or an impossible value (is_test not 0/1, ...).
NormNode read_norm_node(const onnx::NodeProto& node, int64_t opset);

}  // namespace bnorm

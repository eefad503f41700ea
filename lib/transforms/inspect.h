// inspect: what is in a model, and what fold and upgrade would do to it.
//
// Reads the model (never changes it) and reports, for every
// BatchNormalization and InstanceNormalization node in every graph: its
// schema version, attributes with defaults filled in, legacy attributes,
// mode and why, types, parameter shapes and sources, the producer of X,
// whether `fold` would fold it (or why not) and what `upgrade` to opset 15
// would do. The JSON form is documented in docs/cli.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/model.h"

namespace bnorm {

struct ParamReport {
  std::string role;    // "scale", "B", "input_mean", "input_var"
  std::string name;
  std::string source;  // "initializer", "Constant node", "graph input", "node output (Op)", "missing"
  std::string type;    // "float", ... or "?"
  std::vector<int64_t> shape;
  bool shape_known = false;
};

struct NormReport {
  std::string graph;   // "main", "main/if1.then_branch"
  std::string name;    // as written, possibly empty
  std::string label;   // model/node_label.h: the name, or "BatchNormalization #12 -> '462'"
  int index = -1;      // position in its graph
  std::string op;      // "BatchNormalization" / "InstanceNormalization"
  int version = 0;
  std::vector<std::pair<std::string, std::string>> attributes;  // value, "(default)" marked
  std::vector<std::string> legacy;    // legacy attributes present
  std::string mode;                   // "inference" / "training"
  std::string mode_reason;
  std::string T, T1, T2;              // as the schema names them: IN has T only (T1, T2 empty)
  std::vector<ParamReport> params;
  std::string x_producer;             // "Conv 'conv1'", "graph input", ...
  bool foldable = false;
  std::string fold;                   // "into Conv 'conv1'" or the reason it does not fold
  std::vector<std::string> upgrade;   // effects of upgrading to opset 15
  std::vector<std::string> warnings;
};

// A graph input or output: what `eval --input NAME=FILE` needs to know.
struct ValueReport {
  std::string name;
  std::string type;               // "float", "sequence(float)", "optional(int64)", "?" when not declared
  bool shape_known = false;       // the rank is declared
  std::vector<std::string> dims;  // each dim: its size, its symbolic name, or "?"
  std::vector<bool> dim_sized;    // dims[i] is a size (not a name, which may look like one)
  // Inputs only: for each dim without a size, how --dim sets it
  // ("--dim batch=N", "--dim x[2]=N" for a dim without a name).
  std::vector<std::string> dim_options;
};

struct InspectReport {
  std::string file;
  int64_t ir_version = 0;
  std::string producer;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" = ai.onnx), version
  bool opset_implicit = false;                          // no opset_import: opset 1
  int64_t default_opset = 0;
  int graphs = 0;
  int64_t nodes = 0;
  std::map<std::string, int64_t> op_counts;
  // Each op's schema version at the model's opset, from bnorm's version
  // table: "Conv" -> 11; 0 when the op does not exist there (or is not of
  // the default domain).
  std::map<std::string, int> op_versions;
  // What `bnorm eval` cannot run, one entry per op: "LSTM-22 (3 nodes)".
  std::vector<std::string> eval_blockers;
  int64_t initializers = 0;
  bool external_data = false;
  // The main graph's inputs (without the initializers some IR < 4 models
  // also list as inputs) and outputs, as declared.
  std::vector<ValueReport> inputs, outputs;
  // Every normalization node: BatchNormalization and InstanceNormalization
  // (read by norm_op), then LayerNormalization, GroupNormalization,
  // RMSNormalization, MeanVarianceNormalization, LpNormalization and LRN
  // (attributes with their defaults, types, parameters), in graph order.
  std::vector<NormReport> norms;
  int foldable = 0;
};

InspectReport inspect(const Model& model);
nlohmann::json to_json(const InspectReport& r);

}  // namespace bnorm

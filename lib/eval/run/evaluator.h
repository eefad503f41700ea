// The reference evaluator: runs an ONNX model's main graph on CPU and returns
// its outputs, for checking that a transform changed nothing (fold, upgrade)
// and for `bnorm eval`.
//
// Contract:
// - Nodes run in a topological order of the graph (a cycle, or an input that
//   names no value, is Error(input) naming the node).
// - Initializers are values; a graph input with the same name as an
//   initializer overrides it when the caller provides it.
// - Every graph input without an initializer must be provided (Error(usage)
//   naming it); provided inputs are checked against the declared element
//   type, rank and known dims (symbolic dims match anything).
// - Each node runs under the semantics of its schema version: the newest
//   version of the op not above the model's default opset, from bnorm's own
//   version table (model/op_versions.h, opsets 1 to 28).
// - Before anything runs, every node whose op, domain or resolved version
//   bnorm does not implement is gathered into one Error(unsupported) that
//   names each op and version with its node count and first labels. No node
//   ever runs under another version's semantics.
// - Values are freed once their last consumer has run.
// - EvalOptions::on_value, when set, sees every tensor a node of the main
//   graph produces, right after the node runs (before it may be freed), in
//   the order the nodes run; normalization/activation fusion is then off,
//   so every node's output exists to be seen.
// - A BatchNormalization/InstanceNormalization whose Y feeds exactly one
//   activation node (and is no graph output) runs fused with it in one pass;
//   float and double results are bitwise those of the unfused pair.
// - A float or double Conv whose Y feeds exactly one inference
//   BatchNormalization (spatial, parameters [M]) or activation node (and
//   is no graph output) applies it, and the activation after that
//   BatchNormalization, to each stretch of Y as it computes it; likewise a
//   residual Add after either whose other operand exists and has Y's
//   shape, and the activation after the Add. Results are bitwise those of
//   the nodes run apart (docs/semantics.md).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "model/model.h"
#include "model/tensor.h"

namespace bnorm {

// What a caller running one model many times keeps between the runs
// (`bnorm eval --repeat`): the main graph's decoded initializers, the
// outputs of its constant nodes, and the storage pool. The first run
// decodes each initializer as it is first used and fills the cache; later
// runs take them from it instead of decoding again, and give them back at
// the end. A constant node (every input an initializer the caller did not
// override, or a constant node's output; no subgraph) runs in the first run
// only: later runs take its outputs from the cache, unless an observer
// (on_value) or `replace` is set, which see every node run. While a cache
// is given, these values are never freed, fused away or written in place
// during a run, so every run computes from the same ones. One that is also
// a wanted output leaves with the outputs and is made again next time. A
// cache belongs to one model, unchanged between the runs, and one
// EvalOptions::float64 setting: given to another, Error(usage).
struct EvalCache {
  const Model* model = nullptr;
  bool float64 = false;
  std::unordered_map<std::string, Tensor> weights;
  // What ops derive from constant inputs (Gemm's transposed B), by input
  // name and purpose (OpContext::prepared).
  std::unordered_map<std::string, Tensor> prepared;
  BufferPool pool;
};

// What a run did, for tests and reports.
struct EvalStats {
  int nodes_run = 0;  // op calls (a fused pair counts once; constant nodes taken from an EvalCache not at all)
  int fused = 0;      // normalization nodes run fused with their activation
  int conv_fused = 0; // Conv nodes run with the BatchNormalization and/or activation after them
  int product_fused = 0;  // Gemm and MatMul nodes run with the activation (or SiLU) after them
};

struct EvalOptions {
  // Fuse a normalization node with its single activation consumer.
  bool fuse_activations = true;
  // Check given inputs' shapes against the declared ones (rank and known
  // dims). Types are always checked. Off for conformance folders, whose
  // data sometimes disagree with the declared shapes.
  bool check_input_shapes = true;
  // Values to return instead of the graph outputs (any value of the main
  // graph: node outputs, initializers, inputs). Empty: the graph outputs.
  std::vector<std::string> outputs;
  // Widen float, float16 and bfloat16 initializers to double as they are
  // decoded: set by evaluate_float64 (eval/run/float64.h) only, for a model
  // promote_to_float64 prepared.
  bool float64 = false;
  // When set: node outputs of the main graph used instead of what their
  // node computes (same type and shape, else Error(input)); activation
  // fusion is then off. A check's what-if: B run with A's quantized codes.
  const std::map<std::string, Tensor>* replace = nullptr;
  // When set, filled in (subgraph runs included).
  EvalStats* stats = nullptr;
  // When set, weights and storage kept from one run to the next (EvalCache).
  EvalCache* cache = nullptr;
  // When set, called with (value name, producer node label as
  // node_label(graph, index), tensor) for each tensor output of each node
  // of the main graph as it is produced (sequences and optionals are not
  // reported; subgraph values neither). The tensor is only valid during the
  // call: copy what must outlive it. An exception thrown here ends the run.
  std::function<void(const std::string&, const std::string&, const Tensor&)> on_value;
};

// Runs `model` on `inputs` (keyed by graph input name) and returns the
// requested values keyed by name. Errors carry the node they happened at.
std::map<std::string, Tensor> evaluate(const Model& model, const std::map<std::string, Tensor>& inputs,
                                       const EvalOptions& options = {});

// evaluate() for models whose inputs or outputs may be sequences or
// optionals (same contract): a given tensor or
// sequence for an input declared optional is taken as a non-empty optional.
std::map<std::string, eval::Value> evaluate_values(const Model& model, const std::map<std::string, eval::Value>& inputs,
                                                   const EvalOptions& options = {});

// True when the evaluator implements `op_type` (default domain) at the
// schema version in force at `opset`.
bool eval_supports(const std::string& op_type, int64_t opset);

}  // namespace bnorm

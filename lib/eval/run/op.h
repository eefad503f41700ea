// The contract between the executor and the op implementations.
//
// An op is a plain function from an OpContext to its outputs. Each family
// file registers its functions with the schema versions they implement
// (add_<family>_ops in ops.h): a row {op, first, last, fn} covers every
// schema version of op from `first` to `last` (both since-versions from
// model/op_versions.h). A node runs only when its resolved version falls in
// a row; any other version is refused, never run with a neighbour's meaning.
// The function reads attributes at ctx.version, reads its inputs by position
// (nullptr for an absent optional input) and returns one tensor per output
// position of the node (outputs the node does not name may be left empty).
// It throws bnorm::Error for anything wrong; the executor adds the node.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/tensor.h"

namespace bnorm::kernels {
struct Activation;
}

namespace bnorm::eval {

// A graph value of any kind bnorm holds: a tensor, a sequence of tensors
// (ONNX's seq(tensor(T))), or an optional that is empty or holds a tensor
// or a sequence. Values are what the executor keeps; ops that take only
// tensors see them through OpContext::inputs (defined in eval/ops/control/value.cpp).
struct Value {
  enum class Kind { tensor, sequence, optional };
  Kind kind = Kind::tensor;
  Tensor tensor;                  // tensor, or an optional's tensor
  std::vector<Tensor> items;      // sequence, or an optional's sequence
  DType elem = DType::undefined;  // a sequence's element type when known (also when empty)
  bool has_element = false;       // optional: holds an element
  Kind element = Kind::tensor;    // optional: the kind it holds (or would hold)

  static Value of(Tensor t);
  static Value sequence(std::vector<Tensor> items, DType elem);
  // An empty optional of a tensor or of a sequence.
  static Value none(Kind element, DType elem = DType::undefined);
  // An optional holding `v` (a tensor or a sequence).
  static Value some(Value v);

  bool is_tensor() const { return kind == Kind::tensor; }
  // The element of a non-empty optional as a plain value; *this otherwise.
  Value unwrapped() const;
  // Bytes held (every tensor of a sequence counted).
  int64_t byte_size() const;
  // "tensor", "sequence", "optional sequence", "empty optional", ...
  std::string describe() const;
};

// A subgraph (Loop, Scan, SequenceMap body) prepared once and run many
// times in the scope of its node. run() binds `inputs` to the body's
// inputs by position (a tensor or sequence bound to an input the body
// declares optional becomes a non-empty optional) and returns the body's
// outputs by position; errors get `where` ("iteration 3") and the
// subgraph's path as context.
class Subgraph {
 public:
  virtual ~Subgraph() = default;
  virtual int input_count() const = 0;
  virtual int output_count() const = 0;
  virtual std::vector<Value> run(std::vector<Value> inputs, const std::string& where) = 0;
};

struct OpContext {
  const onnx::NodeProto* node = nullptr;
  int version = 0;    // schema version in force for this node
  int64_t opset = 0;  // the model's default-domain opset
  std::vector<const Tensor*> inputs;  // by position; nullptr: absent
  std::filesystem::path model_dir;    // for external data in Constant/If
  // An activation to apply to output 0 in the same pass (norm ops, Conv).
  const kernels::Activation* fused = nullptr;
  // Conv only: the inference BatchNormalization that follows it, to apply
  // to each stretch of output 0 as it is computed (before `fused`). Set by
  // the executor after checking what the BN op would: float or double
  // output, parameters of shape [M] and a floating type, inference mode.
  struct NormAfter {
    const Tensor* scale;
    const Tensor* bias;
    const Tensor* mean;
    const Tensor* var;
    double epsilon;
  };
  const NormAfter* norm_after = nullptr;
  // Conv only: a tensor to add to output 0 after norm_after and before
  // `fused` (a residual Add the executor absorbs). The op sets
  // *residual_added when it did (same type and shape as output 0); else the
  // executor runs the Add itself.
  const Tensor* residual = nullptr;
  bool* residual_added = nullptr;
  // Runs a subgraph (If branches) with this node's scope as outer scope.
  // A branch output that is a sequence or optional becomes the node's
  // output at the same position (through value_outputs): If-13+ only.
  std::function<std::vector<Tensor>(const onnx::GraphProto&)> run_subgraph;
  // Every input as a value, by position (nullptr: absent). For an input
  // that is a tensor, inputs[i] points at values[i]->tensor; for a
  // sequence or optional, inputs[i] is nullptr. Only ops listed by
  // takes_values() are given sequence or optional inputs.
  std::vector<const Value*> values;
  // Where an op puts output k when it is not a tensor (the tensor it
  // returns at k is then ignored). Sized output_count() by the executor.
  std::vector<std::optional<Value>>* value_outputs = nullptr;
  // Prepares the graph attribute `attr` of this node to run repeatedly.
  std::function<std::unique_ptr<Subgraph>(const onnx::GraphProto&, const std::string& attr)> subgraph;

  // By position: the input tensor when its value dies at this node (no
  // later node reads it, it is no graph output, this node reads it once):
  // the op may take it as an output of the same type and shape and write
  // it in place (after reading whatever it needs from it: inputs[i] points
  // at the same tensor). nullptr otherwise. The executor drops the value
  // after the node either way.
  std::vector<Tensor*> donated;

  // With an EvalCache (runs of one model that keep their weights): where
  // data derived from constant inputs is kept from one run to the next,
  // and which inputs are constant (initializers the caller did not
  // override, or outputs of constant nodes). Null and empty otherwise.
  std::unordered_map<std::string, Tensor>* prepared_store = nullptr;
  std::vector<bool> constant_inputs;

  // `make()`'s result for input i and purpose `what` ("transposed"): made
  // in the first run and kept when input i is constant and a cache is
  // given; else nullptr (the op makes what it needs itself).
  const Tensor* prepared(size_t i, const std::string& what, const std::function<Tensor()>& make) const;

  size_t input_count() const { return inputs.size(); }
  Tensor* donated_input(size_t i) const { return i < donated.size() ? donated[i] : nullptr; }
  // Input i's tensor when donated and of type `t` and shape `dims`: to be
  // written in place and returned (moved) as an output. nullptr otherwise.
  Tensor* reusable(size_t i, DType t, const std::vector<int64_t>& dims) const;
  // Input i (present) itself, moved out, when donated; else a copy of it in
  // pooled storage (model/buffer_pool.h). Read nothing from inputs[i] after.
  Tensor input_or_copy(size_t i) const;
  const Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // Input `i` or Error(input) "missing input 'what'".
  const Tensor& required(size_t i, const char* what) const;
  // Whether output `i` is named (so someone wants it).
  bool wants(int i) const;
  int output_count() const { return node->output_size(); }
  // Input `i` as a value, or nullptr when absent.
  const Value* value(size_t i) const { return i < values.size() ? values[i] : nullptr; }
  // Sets output k to a non-tensor (or any) value.
  void set_output(int k, Value v) const;
};

using Tensors = std::vector<Tensor>;

// An op's one output, moved in (`return {t};` would copy t: a braced list's
// elements are const).
inline Tensors one_tensor(Tensor t) {
  Tensors out;
  out.push_back(std::move(t));
  return out;
}
using OpFn = Tensors (*)(const OpContext&);

// One implementation: op_type at schema versions first..last (since-versions).
struct OpImpl {
  std::string op;
  int first = 0;
  int last = 0;
  OpFn fn = nullptr;
};

// What the family files register into (see add_*_ops in ops.h).
class OpRegistry {
 public:
  // Registers fn for op at every schema version from `first` to `last`.
  void add(const char* op, int first, int last, OpFn fn);
  std::vector<OpImpl>& rows() { return rows_; }

 private:
  std::vector<OpImpl> rows_;
};

// Every registered implementation, sorted by op then first version. Built
// once; a row whose bounds are not versions of its op, or that overlaps
// another, is a programming error caught by op_table_test.cpp.
const std::vector<OpImpl>& op_impls();

// The function for `op_type` (default domain) at schema `version`, or nullptr.
OpFn find_op(const std::string& op_type, int version);

// True when some version of `op_type` is implemented.
bool implements_op(const std::string& op_type);

// Why bnorm eval refuses `op_type` by design (random ops, string ops, ...),
// or nullptr.
const char* refusal_reason(const std::string& op_type);

// True for the ops whose implementations read sequence or optional inputs
// through OpContext::values (eval/ops/control/optional.cpp); any other op given one is
// refused by the executor.
bool takes_values(const std::string& op_type);

// Identity of a sequence or optional (Identity-14+ / 16+), for the
// executor; op_identity handles tensors.
Value identity_value(const OpContext& ctx);

// The most iterations a Loop runs (and elements SequenceMap/Scan walk):
// a loop that would run longer is refused (Error(unsupported)), so a
// loop without trip count whose condition never turns false ends.
inline constexpr int64_t kMaxLoopIterations = int64_t{1} << 20;

// The implemented versions of `op_type`, for messages:
// "implemented: 12; the op's versions: 12, 28".
std::string implemented_versions(const std::string& op_type);

}  // namespace bnorm::eval

// What every conversion step works on: one normalization node being moved
// across schema versions (a NormSite), the nodes and initializers the steps
// add around it, and what the steps know about its values.
//
// A step file (bn_<from>_<to>.cpp, axis_11.cpp, ...) defines one Step (or,
// attr_inputs.cpp, a few): its `up` and `down` functions, named on the
// rows of the table of schema changes (versions.h), which says how they
// run. Each first matches (pure: reads the site, returns a plan or throws
// Error(unsupported) naming the node when the case cannot be converted),
// then rewrites. Steps never touch the graph directly: added nodes go to
// `before` (they read the node's inputs) or `after` (they read its
// outputs), in order; the site walker (walk.h) or restore.cpp splices them in.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "model/attrs.h"
#include "model/graph_index.h"
#include "model/norm_op.h"
#include "model/tensor.h"
#include "transforms/upgrade/types.h"
#include "transforms/upgrade/versions.h"

namespace bnorm {
struct OpSchemaInfo;  // transforms/upgrade/schema.h
}

namespace bnorm::steps {

// What happened to one normalization node (types.h).
using NodeReport = ::bnorm::NodeReport;

// Facts shared by every site of one model.
struct Env {
  const GraphIndex* index = nullptr;          // the model before conversion, shapes inferred
  std::unordered_set<std::string> used;       // values consumed by some node or graph outputs (after conversion)
  std::unordered_set<std::string> names;      // every value and node name in use; fresh() adds to it
};

// Every value and node name of every graph of `m` into env.names, and
// every value a node or graph output reads into env.used.
void collect_names(const onnx::ModelProto& m, Env& env);

struct NormSite {
  onnx::NodeProto node;                 // the node in its current form
  int version = 0;                      // its schema version now
  int64_t target_opset = 0;             // the opset the model is moving to
  bool inference = false;               // --inference: training nodes become inference nodes
  const GraphIndex::Scope* scope = nullptr;  // where it is in env->index
  Env* env = nullptr;
  std::vector<onnx::NodeProto> before, after;
  std::vector<onnx::TensorProto> initializers;
  std::map<std::string, DType> new_types;      // types of values the steps made
  std::map<std::string, int> new_ranks;
  NodeReport report;

  NormNode read() const;                // read_norm_node at `version`
  std::string label() const;            // "node 'bn1' (BatchNormalization-7)"
  std::string stem() const;             // the node's name, or its op when it has none
  std::string fresh(const std::string& stem);  // a name nothing in the model uses yet
  std::optional<DType> type_of(const std::string& value) const;
  std::optional<std::vector<int64_t>> dims_of(const std::string& value) const;  // -1: unknown dim
  std::optional<int> rank_of(const std::string& value) const;
  std::optional<int> rank_at(const std::string& value, int depth) const;  // rank_of, `depth` producers back
  // Consumed by a node of the graph, a node the steps added, or a graph output.
  bool is_used(const std::string& value) const;

  onnx::NodeProto& add_before(const std::string& op, std::vector<std::string> in, std::vector<std::string> out);
  onnx::NodeProto& add_after(const std::string& op, std::vector<std::string> in, std::vector<std::string> out);
  std::string add_int64s(const std::string& stem, const std::vector<int64_t>& values);  // an initializer; its name
};

// The schema version of default-domain `op` at `opset` (0: none).
int schema_version(const std::string& op, int64_t opset);

// Attribute helpers.
bool remove_attr(onnx::NodeProto& n, const std::string& name);  // true if it was there
void set_int(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
// Cast's `to`: an int from Cast-6 on, the type's name (e.g. "FLOAT") in Cast-1.
void set_cast_to(onnx::NodeProto& cast, int64_t opset, int32_t type);

// Input (output) `i` of `n`, or "" when the node has fewer: an absent optional one.
std::string input_at(const onnx::NodeProto& n, int i);
std::string output_at(const onnx::NodeProto& n, int i);

// `value` as a 1-D tensor: itself when it is 1-D, else a reshaped copy
// (constants, as a new initializer) or the output of an added Reshape(value, [-1]).
std::string as_vector(NormSite& s, const std::string& value);

// Removes consumed_inputs (BN-1, IN-1), reporting it.
void drop_consumed_inputs(NormSite& s);

// Outputs: trims trailing outputs to `count` (they must be unused; Error
// naming the node and the output otherwise), or pads with fresh unused names.
void trim_outputs(NormSite& s, int count, const std::string& why);
void pad_outputs(NormSite& s, int count);

// Makes the node's input types agree where the target schema wants one type
// (see types.cpp): groups of input indices that must share a type.
void unify_types(NormSite& s, const std::vector<std::vector<int>>& groups);
// Error(unsupported) when an input or output of the node is bfloat16.
void refuse_bfloat16(const NormSite& s, int target_version);

// bfloat16 through float (bf16_casts.cpp): going down below the
// version where the op gained bfloat16, the node computes in float between
// Casts. match_bf16_casts is pure: the inputs and outputs to cast (`at`:
// the node's schema now, `target`: at the target), empty when none or the
// op is not one whose bfloat16 node computes in float; Error(unsupported)
// naming the node when the target opset is below 13.
struct Bf16Casts {
  std::vector<int> inputs, outputs;
  bool empty() const { return inputs.empty() && outputs.empty(); }
};
bool computes_bf16_in_float(const std::string& op);
Bf16Casts match_bf16_casts(const NormSite& s, const OpSchemaInfo& at, const OpSchemaInfo& target);
void cast_bf16_through_float(NormSite& s, const Bf16Casts& c);
// "InstanceNormalization-6 has no bfloat16; inputs 'x', ... to float; output
// 'y' back to bfloat16", for reports, plans and errors.
std::string describe_bf16_casts(const NormSite& s, const Bf16Casts& c, int target_version);

// BN 6 -> 1 (bn_1_6.cpp): consumed_inputs = [0, 0, 0, 1, 1] added; also
// for a BN-1 input without it.
void bn_1_6_down(NormSite&);

// The steps of opset <= 17 node `s.node` runs going from opset `from` to
// `to` (their matches, versions.h), in the order they run; run_steps runs
// them, keeping s.version (run_steps.cpp). `on_step` is told each step and
// the versions before and after it.
std::vector<const Step*> own_steps(const onnx::NodeProto& n, int64_t from, int64_t to);
void run_steps(NormSite& s, int64_t from, int64_t to,
               const std::function<void(const Step&, int before, int after)>& on_step = nullptr);

// Dropout from its schema version (`version`) to the one of `target_opset`,
// in one step (dropout.cpp); with `inference`, a training Dropout
// becomes an inference one (report.made_inference).
void dropout_convert(NormSite& s, bool inference);
// Cast across 6 (cast_1_6.cpp) and Pad across 2 and 11
// (pad_2_11.cpp), from `version` to the one of `target_opset`.
void cast_convert(NormSite& s);
// Constant 12 -> 11 for a node kept as it is: value_float(s) / value_int(s) /
// value_string(s) written as the `value` tensor (constant_11_12.cpp).
void constant_11_12_down(onnx::NodeProto& n);
void pad_convert(NormSite& s);
// Split between its attribute form (< 13) and its input form (13+).
void split_convert(NormSite& s);

// Attributes <-> inputs up to 17 (attr_inputs.cpp), from `version`
// to the version of `target_opset`, in one step.
void clip_convert(NormSite& s);
void slice_convert(NormSite& s);
void topk_convert(NormSite& s);
void squeeze_convert(NormSite& s);  // Squeeze and Unsqueeze
// Resize 11+ -> 10 / Upsample 9 / 7 (resize_10.cpp), going down only.
void resize_convert(NormSite& s);
// Upsample 7/9 or Resize 10 -> Resize 10+, going up (resize_10.cpp).
void resize_up(NormSite& s);
// Upsample 7/8 <-> 9: scales attribute <-> constant input (upsample_7_9.cpp).
void upsample_7_9(NormSite& s);
// Upsample 7/8/9 <-> 1 (experimental) across 7 (upsample_1_7.cpp):
// down to version 1; up to version 7 (the caller goes on to 9 or Resize).
void upsample_1_7_down(NormSite& s);
void upsample_1_7_up(NormSite& s);
// Constant below 9 with a value Constant-1 lacks (constant_9.cpp).
std::optional<onnx::TensorProto> constant_value(const onnx::NodeProto& n);
bool constant_needs_initializer(const onnx::NodeProto& n);
void constant_9_down(NormSite& s);

// Constant inputs (inputs.cpp). constant_ints: Error(unsupported)
// naming the node and the input when it is not a constant, saying it
// cannot `why` ("become an attribute below 18").
std::optional<Tensor> constant_input(const NormSite& s, int index);
std::vector<int64_t> constant_ints(const NormSite& s, int index, const std::string& what, const std::string& why);
void drop_input(onnx::NodeProto& n, int index);  // cleared; trailing empty inputs removed
void set_input(onnx::NodeProto& n, int index, const std::string& value);  // pads with "" as needed
// Error(unsupported) naming the node.
[[noreturn]] void refuse(const NormSite& s, const std::string& why);

// Lowerings (lower/<op>_<version>.cpp, helpers in lower/lower.h): the site's node,
// an op that does not exist at target_opset, written as the ops of its
// function body in the forms of the model's opset `opset`, all in `before`
// (the node itself is dropped; ConstantOfShape leaves an initializer). GroupNormalization 18 and 21 share one;
// MeanVarianceNormalization 9 and 13 too.
void lower_gelu_20(NormSite& s, int64_t opset);
void lower_layernorm_17(NormSite& s, int64_t opset);
void lower_rmsnorm_23(NormSite& s, int64_t opset);
void lower_groupnorm_18(NormSite& s, int64_t opset);
void lower_mvn_9(NormSite& s, int64_t opset);
void lower_constantofshape_9(NormSite& s, int64_t opset);
void lower_attention_23(NormSite& s, int64_t opset);  // lower/attention_23.cpp
void lower_causalconv_27(NormSite& s, int64_t opset);  // lower/causalconv_27.cpp: Concat or Pad, Conv, Slice
void lower_linear_attention_27(NormSite& s, int64_t opset);  // lower/linear_attention_27.cpp: a Scan

void lower_swish_24(NormSite& s, int64_t opset);   // lower/swish_24.cpp
void lower_tensorscatter_24(NormSite& s, int64_t opset);  // lower/tensorscatter_24.cpp: one write position
void lower_swiglu_28(NormSite& s, int64_t opset);  // lower/swish_24.cpp
// CumProd-26, BitCast-26: refused with why.
[[noreturn]] void lower_refused_24(NormSite& s, int64_t opset);
// Affine, Crop, ImageScaler, ParametricSoftplus, Scale, ScaledTanh going up past 9.
void lower_experimental_9(NormSite& s, int64_t opset);

// --inference: turns a training node into an inference node at its own
// version (is_test = 1 / one output / training_mode removed). Returns
// false when it already was one.
bool make_inference(NormSite& s);

}  // namespace bnorm::steps

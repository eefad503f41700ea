// The float64 evaluation of a model (A64): every floating tensor computed in
// double, the reference `eval --compare` judges rounding against
// (eval/report/rounding.h; docs/semantics.md "float64 evaluation").
//
// What changes, and nothing else:
// - float, float16 and bfloat16 graph inputs, initializers (every graph,
//   decoded as they are used) and Constant / ConstantOfShape values are
//   widened to double (exactly: every such value is a double);
// - Cast and the dtype / output_datatype attributes of the ops that make
//   floating tensors (EyeLike, Random*, Bernoulli, window functions,
//   MelWeightMatrix, SequenceEmpty) name double instead of a narrower
//   floating type; CastLike follows its target, which is then double;
// - declared types (graph inputs, outputs, value_info, in subgraphs too)
//   say double where they said a narrower floating type.
// Integer, bool and string values are untouched, as is every attribute that
// is a number (epsilon stays the float32 value the model stores).
//
// Where this cannot stand for exact arithmetic, float64_blocker says why
// and the model is not promoted: ops that round floats to integer codes
// (QuantizeLinear, DynamicQuantizeLinear, the QLinear* and *Integer ops:
// their codes are a discontinuous function of the float input), and
// float8 / 4-bit types anywhere (their casts are the model's meaning).
#pragma once

#include <map>
#include <string>

#include "eval/run/evaluator.h"
#include "model/model.h"
#include "model/tensor.h"

namespace bnorm {

// Why `model` has no float64 evaluation ("" when it has one): the first
// node or tensor that rules it out, named.
std::string float64_blocker(const Model& model);

// `model` with its node attributes and declared types promoted as above
// (initializer data is widened as it is decoded, by evaluate_float64).
Model promote_to_float64(const Model& model);

// Runs a model promote_to_float64 made on `inputs` as given to the original
// (float32, float16, bfloat16 inputs are widened): its outputs, floating
// ones as double.
std::map<std::string, Tensor> evaluate_float64(const Model& promoted, const std::map<std::string, Tensor>& inputs,
                                               EvalOptions options = {});

// `t` as double when it is float, float16 or bfloat16; `t` otherwise.
Tensor widened(Tensor t);

}  // namespace bnorm

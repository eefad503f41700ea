// Lowering, the first pass of a conversion: a node whose op does not exist
// at the target is replaced by ops that compute it, written at the model's
// opset (steps/lower_*.cpp); the rest of the conversion then moves those
// like any other node, above 17 and below (docs/upgrade.md, "Lowering").
// Going down: ops that do not exist yet (Gelu below 20, LayerNormalization
// below 17, RMSNormalization below 23, GroupNormalization below 18,
// MeanVarianceNormalization 9/13 below 9, Swish below 24, SwiGLU below 28,
// Attention below 23 (4-D, no mask): their function bodies; TensorScatter
// below 24 at one known position: Slice and Concat; CumProd, BitCast,
// LinearAttention and CausalConvWithState refused with why;
// ConstantOfShape below 9: an initializer). Going up past 9: the
// experimental ops ONNX removed (Affine, Crop, ImageScaler,
// ParametricSoftplus, Scale, ScaledTanh).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "model/model.h"
#include "transforms/upgrade/types.h"

namespace bnorm::upgrade_detail {

// Whether `n` (a node of a model at opset `from`) is lowered going to `to`.
bool is_lowered(const onnx::NodeProto& n, int64_t from, int64_t to);

// Thrown by lower_for_target with every node it could not lower (the model
// left as it was): upgrade_model lists them with every other blocker.
struct LoweringFailed {
  std::vector<Error> errors;
};

// Lowers every such node of every graph of `model`; each lowered node is a
// rewrite of `r` ("lowered to ReduceMean, Sub, ..."), and constants only
// it read are removed (r.removed). When a node cannot be lowered, throws
// LoweringFailed, `model` unchanged.
void lower_for_target(Model& model, int64_t from, int64_t to, UpgradeReport& r);

// What lower_for_target would do, without changing `m`: one NodePlan per
// node it lowers (by "bnorm", to 0, changes {"lowered to ..."}), blocker
// set when it cannot.
std::vector<NodePlan> plan_lowering(const onnx::ModelProto& m, int64_t from, int64_t to);

}  // namespace bnorm::upgrade_detail

// The ops of the ai.onnx.preview domain that bnorm eval runs. The domain
// has one opset version, 1 ("No versioning maintained for experimental
// ops", Changelog.md): its ops run at version 1 whatever version the model
// imports. Default-domain ops are in op.h's table.
#pragma once

#include <string>

#include "eval/run/op.h"

namespace bnorm::eval {

inline constexpr const char* kPreviewDomain = "ai.onnx.preview";

bool is_preview_domain(const std::string& domain);
// The function for `op_type` of ai.onnx.preview, or nullptr.
OpFn find_preview_op(const std::string& op_type);

}  // namespace bnorm::eval

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "core/error.h"
#include "model/model.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade.h"

namespace bnorm {

void check_model_full(const onnx::ModelProto& model, const std::filesystem::path& external_dir) {
  try {
    onnx::ModelProto copy = model;
    if (!external_dir.empty()) {
      // The checker looks for side files relative to the current directory
      // when it checks a model in memory: point it at the model's.
      for_each_tensor(copy, [&](onnx::TensorProto& t) {
        if (!is_external(t)) return;
        for (auto& e : *t.mutable_external_data()) {
          if (e.key() == "location") e.set_value((external_dir / e.value()).string());
        }
      });
    }
    onnx::checker::check_model(copy);
    onnx::ShapeInferenceOptions strict{true, 1, false};
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::input, fmt::format("the converted model does not pass ONNX's checker: {}", e.what()))
        .with_hint("nothing was written; --no-check writes it anyway");
  }
}

int64_t required_ir_version(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  return 8;
}

}  // namespace bnorm

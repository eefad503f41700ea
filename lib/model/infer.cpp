#include "model/infer.h"

#include <onnx/shape_inference/implementation.h>

#include "core/log.h"
#include "model/onnx_guards.h"

namespace bnorm {

onnx::ModelProto with_inferred_shapes(const onnx::ModelProto& model) {
  install_onnx_inference_guards();
  onnx::ModelProto copy = model;
  if (copy.opset_import_size() == 0) {
    auto* op = copy.add_opset_import();  // IR 1/2 models: opset 1
    op->set_version(1);
  }
  try {
    onnx::ShapeInferenceOptions options{false, 0, false};
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    log().debug("shape inference stopped: {}", e.what());
  }
  if (model.opset_import_size() == 0) copy.clear_opset_import();
  return copy;
}

}  // namespace bnorm

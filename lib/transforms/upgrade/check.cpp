#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "core/error.h"
#include "model/deferred.h"
#include "model/model.h"
#include "model/onnx_guards.h"
#include "transforms/upgrade/upgrade.h"
#include "transforms/upgrade/structure.h"

namespace bnorm {

namespace {

// ONNX's checker looks for an external tensor's file at its location
// (relative to the working directory when given a ModelProto): the copy it
// checks names the real files by absolute paths, deferred tensors their
// source model file.
void locate_external_data(onnx::ModelProto& m, const std::filesystem::path& model_dir) {
  for_each_tensor(m, [&](onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return;
    std::string path;
    if (is_deferred(t)) {
      path = deferred_source_path(t);
    } else {
      for (const auto& kv : t.external_data()) {
        if (kv.key() == "location" && !model_dir.empty()) path = std::filesystem::absolute(model_dir / kv.value()).string();
      }
    }
    if (path.empty()) return;
    for (auto& kv : *t.mutable_external_data()) {
      if (kv.key() == "location") kv.set_value(path);
    }
  });
}

}  // namespace

void check_model_full(const onnx::ModelProto& model, const std::filesystem::path& model_dir) {
  if (default_opset(model) > kOnnxConverterMaxOpset) {
    upgrade_detail::check_structure(model);  // ONNX 1.12's checker knows no opset above 17
    return;
  }
  install_onnx_inference_guards();
  try {
    onnx::ModelProto copy = model;
    locate_external_data(copy, model_dir);
    onnx::checker::check_model(copy);
    onnx::ShapeInferenceOptions strict{true, 1, false};
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::input, fmt::format("the converted model does not pass ONNX's checker: {}", e.what()))
        .with_hint("nothing was written; --no-check writes it anyway");
  }
  upgrade_detail::check_structure(model);  // what ONNX's checker leaves unchecked (structure.h)
}


}  // namespace bnorm

#include "transforms/about.h"

#include <fmt/format.h>
#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

#include "kernels/isa.h"
#include "model/model.h"
#include "model/op_versions.h"
#include "transforms/upgrade/upgrade.h"

namespace bnorm {

About about() {
  About a;
  a.version = BNORM_VERSION;
  a.onnx_version = ONNX_NAMESPACE::LAST_RELEASE_VERSION;
  a.protobuf_version = google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION);
  a.min_opset = kUpgradeMinOpset;
  a.max_opset = kUpgradeMaxOpset;
  // eval resolves every version the op table knows (refusing, by name, the ones it does not implement).
  a.eval_max_opset = newest_known_opset();
  a.onnx_converter_max_opset = kOnnxConverterMaxOpset;
  a.max_ir_version = kNewestIrVersion;
  a.kernel_level = kernels::isa_name(kernels::active_isa());
  const kernels::Isa isa = kernels::active_isa();
  a.product_vectors = isa == kernels::Isa::Generic                                  ? "128-bit"
                      : isa == kernels::Isa::Avx512 && kernels::wide_products_active() ? "512-bit"
                                                                                        : "256-bit";
#if defined(__clang__)
  a.compiler = fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  a.compiler = fmt::format("g++ {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#endif
  return a;
}

}  // namespace bnorm

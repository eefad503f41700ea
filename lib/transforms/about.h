// What this build of bnorm is and was built with: `bnorm version`.
#pragma once

#include <cstdint>
#include <string>

namespace bnorm {

struct About {
  std::string version;           // bnorm's own, "0.1.0"
  std::string onnx_version;      // the ONNX library it links (libonnx), "1.12.0"
  std::string protobuf_version;  // "3.21.12"
  int64_t min_opset = 1, max_opset = 0;  // ai.onnx opsets upgrade converts between (and eval runs)
  int64_t eval_max_opset = 0;            // the newest ai.onnx opset eval runs (the op table's newest)
  int64_t onnx_converter_max_opset = 0;  // the newest opset ONNX's converter knows
  int64_t max_ir_version = 0;            // the newest IR version read
  std::string kernel_level;      // the SIMD level the kernels run at on this machine
  std::string product_vectors;   // the matrix products' vector width there: "512-bit"
  std::string compiler;          // "g++ 12.2.0"
};

About about();

}  // namespace bnorm

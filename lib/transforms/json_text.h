// The text of every --json document bnorm prints (docs/cli.md).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace bnorm {

// Indented by 2, and valid UTF-8 even when a model's names are not (ONNX
// names are any bytes, and nlohmann::json refuses to print invalid UTF-8):
// each invalid byte becomes U+FFFD.
inline std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace bnorm

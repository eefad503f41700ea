#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace bnorm {

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::get("bnorm");
    if (!l) l = spdlog::stderr_color_mt("bnorm");
    l->set_pattern("bnorm: %^%l%$: %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *logger;
}

}  // namespace bnorm

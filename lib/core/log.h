// The one named logger of bnorm ("bnorm"), writing to stderr. It is valid
// from the first call; the CLI sets its level (--verbose, --quiet).
// Kernels never log.
#pragma once

#include <spdlog/spdlog.h>

namespace bnorm {

spdlog::logger& log();

}  // namespace bnorm

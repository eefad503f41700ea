// The one named logger of bnorm ("bnorm"), writing to stderr. It is valid
// from the first call; the CLI sets its level (--verbose, --quiet).
// Kernels never log.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>

namespace bnorm {

// Levels: warn (default), debug for -v (each phase of a command with its
// time: read, fold, verify, convert, evaluate, write), trace for -vv (per
// node: each node evaluated with its time, each fold decision).
spdlog::logger& log();

// Milliseconds since construction, for the phase timings of -v.
class Stopwatch {
 public:
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace bnorm

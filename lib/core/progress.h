// How far long work has come, for whoever shows it: the CLI draws a
// progress line on a terminal; the library only reports, and never draws.
// With no listener (the default, and every library user who sets none) a
// report costs one relaxed atomic load.
//
// Phases nest (a fold's --verify runs the evaluator): a listener sees
// begin/end in stack order, on the thread that does the work.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace bnorm::progress {

enum class Unit { bytes, nodes, items };

class Listener {
 public:
  virtual ~Listener() = default;
  // A phase began: what it does ("evaluating model.onnx"), how much there is
  // to do (0: unknown) and in what unit.
  virtual void begin(const std::string& what, uint64_t total, Unit unit) noexcept = 0;
  // How much of the innermost phase is done.
  virtual void advance(uint64_t done) noexcept = 0;
  virtual void end() noexcept = 0;
};

// Process-wide; nullptr: nobody listens. Set it before work starts.
void set_listener(Listener* listener) noexcept;
Listener* listener() noexcept;

// One phase, reported while it lives.
class Phase {
 public:
  Phase(const std::string& what, uint64_t total, Unit unit) noexcept;
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;
  void advance(uint64_t n = 1) noexcept {
    done_ += n;
    if (listener_) listener_->advance(done_);
  }

 private:
  Listener* listener_;
  uint64_t done_ = 0;
};

}  // namespace bnorm::progress

// Stopping a long evaluation from outside: a signal handler or another
// thread sets a flag that the working thread watches.
//
//   std::atomic<bool> stop{false};  // set to true by a SIGINT handler, say
//   bnorm::api::InterruptScope watch(stop);
//   auto outputs = bnorm::api::run(*model, inputs);  // Error "interrupted" once stop is set
//
// While an InterruptScope lives, the evaluator on its thread (run, compare,
// fold's and upgrade's verify, inspect's fp16 measurements) checks `flag`
// before each node and, once it is set, throws Error(usage, "interrupted")
// (the flag is left as it is). Setting a lock-free std::atomic<bool> is
// async-signal-safe. A node that has started runs to its end, and work that
// evaluates nothing (reading, converting, writing) is not interrupted.
#pragma once

#include <atomic>

namespace bnorm::api {

class InterruptScope {
 public:
  explicit InterruptScope(const std::atomic<bool>& flag) noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

}  // namespace bnorm::api

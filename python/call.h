// How the module calls the library (bnorm_module.cpp's one way in): without
// the GIL, the library's warnings collected and issued through Python's
// `warnings` afterwards, SIGINT taken as an interruption of the evaluation,
// and bnorm::Error turned into bnorm.Error's subclass for its kind.
//
// - Warnings: the spdlog logger "bnorm" (the library's, docs/api.md) writes
//   to a sink of the module's; on a thread inside call() its warnings are
//   kept for Python, elsewhere they go to stderr as the CLI's.
// - Ctrl-C: during a call on the main thread, while SIGINT is Python's
//   default (KeyboardInterrupt), a handler of ours sets the flag the
//   evaluator watches (<bnorm/interrupt.h>): it stops before its next node,
//   Python's handler is back, and KeyboardInterrupt is raised. A SIGINT
//   handler of the user's is left alone (it runs when the call returns, as
//   for any C call).
#pragma once

#include <bnorm/bnorm.h>
#include <pybind11/pybind11.h>
#include <signal.h>

#include <atomic>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace bnorm::python {

namespace py = pybind11;

// Once, at import: the logger's sink, and bnorm::Error's translation.
void route_warnings();
void translate_errors();

// While it lives, the library's warnings on this thread go to `into`.
class WarningCollector {
 public:
  explicit WarningCollector(std::vector<std::string>* into) noexcept;
  ~WarningCollector();
  WarningCollector(const WarningCollector&) = delete;
  WarningCollector& operator=(const WarningCollector&) = delete;

 private:
  std::vector<std::string>* previous_;
};

// Each as a bnorm.BnormWarning at the caller's line (error_already_set when
// a filter makes one an error).
void warn(const std::vector<std::string>& messages);

// Takes SIGINT while it lives, when Python would raise KeyboardInterrupt
// for it and this is the main thread (where Python takes signals).
class SigintWatch {
 public:
  SigintWatch();
  ~SigintWatch() { restore(); }
  SigintWatch(const SigintWatch&) = delete;
  SigintWatch& operator=(const SigintWatch&) = delete;

  bool installed() const { return installed_; }
  // The flag the handler sets.
  static const std::atomic<bool>& flag();
  // Python's handler back; true when a SIGINT came meanwhile.
  bool restore();

 private:
  bool installed_ = false;
  struct sigaction previous_ {};
};

// Runs `f` without the GIL, its warnings collected, then issues them. An
// error names `file` (the model's, as the CLI's errors do) unless it names
// one already. Call with the GIL held.
template <class F>
auto call(F&& f, const std::optional<std::string>& file = std::nullopt) -> decltype(f()) {
  SigintWatch sigint;
  std::vector<std::string> warnings;
  std::optional<WarningCollector> collect(std::in_place, &warnings);
  std::exception_ptr failed;
  std::optional<decltype(f())> result;
  {
    py::gil_scoped_release nogil;
    std::optional<api::InterruptScope> watch;
    if (sigint.installed()) watch.emplace(SigintWatch::flag());
    try {
      result.emplace(f());
    } catch (Error& e) {
      if (file) e.in_file(*file);
      failed = std::current_exception();
    } catch (...) {
      failed = std::current_exception();
    }
  }
  collect.reset();
  if (sigint.restore()) {
    // As if the signal came now: Python's handler raises KeyboardInterrupt.
    PyErr_SetInterrupt();
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  warn(warnings);
  if (failed) std::rethrow_exception(failed);
  return std::move(*result);
}

}  // namespace bnorm::python

#include "call.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace bnorm::python {

namespace {

thread_local std::vector<std::string>* t_warnings = nullptr;

class WarningSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (t_warnings && msg.level >= spdlog::level::warn) {
      t_warnings->emplace_back(msg.payload.data(), msg.payload.size());
      return;
    }
    spdlog::memory_buf_t text;
    formatter_->format(msg, text);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

// The Python classes of bnorm/_errors.py, alive for the process (never
// released: the interpreter may be finalizing when a static would be).
py::handle errors_module() {
  static py::handle m = py::module_::import("bnorm._errors").release();
  return m;
}

const char* error_class(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage: return "UsageError";
    case ErrorKind::input: return "InputError";
    case ErrorKind::unsupported: return "UnsupportedError";
    case ErrorKind::check_failed: return "CheckFailed";
  }
  return "Error";
}

py::object or_none(const std::string& s) { return s.empty() ? py::object(py::none()) : py::object(py::str(s)); }

void raise(const Error& e) {
  py::object cls = errors_module().attr(error_class(e.kind()));
  py::object err = cls(e.message(), py::arg("hint") = or_none(e.hint()), py::arg("file") = or_none(e.file()),
                       py::arg("node") = or_none(e.node()), py::arg("op") = or_none(e.op()),
                       py::arg("version") = e.version() ? py::object(py::int_(e.version())) : py::object(py::none()),
                       py::arg("exit_code") = e.exit_code());
  PyErr_SetObject(cls.ptr(), err.ptr());
}

std::atomic<bool> g_sigint{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void on_sigint(int) { g_sigint.store(true, std::memory_order_relaxed); }

}  // namespace

void route_warnings() {
  auto sink = std::make_shared<WarningSink>();
  auto logger = spdlog::get("bnorm");
  if (logger) {
    logger->sinks().clear();
    logger->sinks().push_back(sink);
  } else {
    // The library's logger adopts this one (its pattern and level are
    // the library's).
    logger = std::make_shared<spdlog::logger>("bnorm", sink);
    logger->set_level(spdlog::level::warn);
    spdlog::register_logger(logger);
  }
}

void translate_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e);
    }
  });
}

WarningCollector::WarningCollector(std::vector<std::string>* into) noexcept : previous_(t_warnings) {
  t_warnings = into;
}

WarningCollector::~WarningCollector() { t_warnings = previous_; }

void warn(const std::vector<std::string>& messages) {
  if (messages.empty()) return;
  py::object cls = errors_module().attr("BnormWarning");
  for (const auto& m : messages) {
    // stacklevel 2: the user's line that called bnorm.fold, not the package's.
    if (PyErr_WarnEx(cls.ptr(), m.c_str(), 2) != 0) throw py::error_already_set();
  }
}

SigintWatch::SigintWatch() {
  static const unsigned long main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  if (PyThread_get_thread_ident() != main_thread) return;
  py::module_ signal = py::module_::import("signal");
  if (!signal.attr("getsignal")(SIGINT).is(signal.attr("default_int_handler"))) return;
  struct sigaction ours {};
  ours.sa_handler = on_sigint;
  sigemptyset(&ours.sa_mask);
  g_sigint.store(false);
  installed_ = ::sigaction(SIGINT, &ours, &previous_) == 0;
}

const std::atomic<bool>& SigintWatch::flag() { return g_sigint; }

bool SigintWatch::restore() {
  if (!installed_) return false;
  ::sigaction(SIGINT, &previous_, nullptr);
  installed_ = false;
  return g_sigint.exchange(false);
}

}  // namespace bnorm::python

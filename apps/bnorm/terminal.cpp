#include "terminal.h"

#include <fmt/format.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"
#include "core/progress.h"

namespace bnorm::cli {

namespace {

// One writer of stderr at a time: messages, and the progress line.
std::mutex stderr_mu;
bool line_drawn = false;  // under stderr_mu
bool use_color = false;

void put(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}

void erase_locked() {
  if (!line_drawn) return;
  put("\r\033[K");
  line_drawn = false;
}

std::string paint(const std::string& text, const char* code) {
  return use_color ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
}

const char* level_color(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::err:
    case spdlog::level::critical: return "1;31";
    case spdlog::level::warn: return "1;33";
    default: return "2";
  }
}

// The logger's one sink: "bnorm: LEVEL: message" on stderr.
class StderrSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    const std::string text = fmt::format("bnorm: {}: {}\n", paint(std::string(level.data(), level.size()),
                                                                   level_color(msg.level)),
                                         std::string(msg.payload.data(), msg.payload.size()));
    std::lock_guard<std::mutex> lock(stderr_mu);
    erase_locked();
    put(text);
  }
  void flush_() override {}
};

std::string amount(uint64_t n, progress::Unit unit) {
  if (unit == progress::Unit::bytes) {
    if (n >= (1u << 20)) return fmt::format("{:.1f} MB", static_cast<double>(n) / 1e6);
    return fmt::format("{} KB", n / 1000);
  }
  return std::to_string(n);
}

const char* unit_name(progress::Unit unit) {
  switch (unit) {
    case progress::Unit::nodes: return " nodes";
    case progress::Unit::items: return "";
    default: return "";
  }
}

class ProgressLine : public progress::Listener {
 public:
  explicit ProgressLine(std::chrono::milliseconds delay) : delay_(delay) {
    std::thread([this] { draw_loop(); }).detach();
  }

  void begin(const std::string& what, uint64_t total, progress::Unit unit) noexcept override {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      auto level = std::make_unique<Level>();
      level->what = what;
      level->total = total;
      level->unit = unit;
      if (stack_.empty()) start_ = std::chrono::steady_clock::now();
      stack_.push_back(std::move(level));
      current_.store(stack_.back().get(), std::memory_order_release);
    } catch (...) {
    }
  }

  void advance(uint64_t done) noexcept override {
    if (Level* l = current_.load(std::memory_order_acquire)) l->done.store(done, std::memory_order_relaxed);
  }

  void end() noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stack_.empty()) stack_.pop_back();
    current_.store(stack_.empty() ? nullptr : stack_.back().get(), std::memory_order_release);
    if (stack_.empty()) {
      std::lock_guard<std::mutex> out(stderr_mu);
      erase_locked();
    }
  }

 private:
  struct Level {
    std::string what;
    uint64_t total = 0;
    progress::Unit unit = progress::Unit::items;
    std::atomic<uint64_t> done{0};
  };

  static size_t columns() {
    winsize ws{};
    if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) return ws.ws_col;
    return 80;
  }

  void draw_loop() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::string line;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stack_.empty() || std::chrono::steady_clock::now() - start_ < delay_) continue;
        const Level& l = *stack_.back();
        const uint64_t done = l.done.load(std::memory_order_relaxed);
        line = fmt::format("bnorm: {}: {}", l.what, amount(done, l.unit));
        if (l.total > 0) {
          line += fmt::format("/{}{} ({}%)", amount(l.total, l.unit), unit_name(l.unit),
                              std::min<uint64_t>(100, done * 100 / l.total));
        } else {
          line += unit_name(l.unit);
        }
      }
      const size_t width = columns() - 1;
      if (line.size() > width) line.resize(width);
      std::lock_guard<std::mutex> out(stderr_mu);
      put("\r" + line + "\033[K");
      line_drawn = true;
    }
  }

  const std::chrono::milliseconds delay_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Level>> stack_;
  std::atomic<Level*> current_{nullptr};
  std::chrono::steady_clock::time_point start_;
};

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

}  // namespace

void setup_terminal(const TerminalOptions& o) {
  const bool tty = ::isatty(2) == 1;
  const char* term = std::getenv("TERM");
  const bool dumb = term && std::strcmp(term, "dumb") == 0;
  use_color = o.color == ColorChoice::always ||
              (o.color == ColorChoice::automatic && !env_set("NO_COLOR") && tty && !dumb);
  auto& logger = log();
  logger.sinks().clear();
  logger.sinks().push_back(std::make_shared<StderrSink>());
  logger.set_level(o.verbosity < 0    ? spdlog::level::err
                   : o.verbosity == 0 ? spdlog::level::warn
                   : o.verbosity == 1 ? spdlog::level::debug
                                      : spdlog::level::trace);
  if (tty && !dumb && !env_set("CI") && o.verbosity >= 0) {
    long delay = 1000;
    if (const char* d = std::getenv("BNORM_PROGRESS_DELAY_MS")) delay = std::strtol(d, nullptr, 10);
    static ProgressLine* line = new ProgressLine(std::chrono::milliseconds(delay));  // lives until exit
    progress::set_listener(line);
  }
}

void print_error_line(const std::string& message, const std::string& hint) {
  std::string text = fmt::format("bnorm: {}: {}\n", paint("error", "1;31"), message);
  if (!hint.empty()) text += fmt::format("  {}: {}\n", paint("hint", "1"), hint);
  std::lock_guard<std::mutex> lock(stderr_mu);
  erase_locked();
  put(text);
}

void erase_progress() noexcept {
  // Not waiting for the lock: a thread holding it may be the one the signal
  // stopped; a stray line is better than a hang.
  if (!stderr_mu.try_lock()) return;
  erase_locked();
  stderr_mu.unlock();
}

}  // namespace bnorm::cli

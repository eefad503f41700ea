#include "core/progress.h"

namespace bnorm::progress {

namespace {
std::atomic<Listener*> current{nullptr};
}  // namespace

void set_listener(Listener* l) noexcept { current.store(l, std::memory_order_relaxed); }
Listener* listener() noexcept { return current.load(std::memory_order_relaxed); }

Phase::Phase(const std::string& what, uint64_t total, Unit unit) noexcept : listener_(listener()) {
  if (listener_) listener_->begin(what, total, unit);
}

Phase::~Phase() {
  if (listener_) listener_->end();
}

}  // namespace bnorm::progress

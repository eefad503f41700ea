#include "core/interrupt.h"

#include "core/error.h"

namespace bnorm::interrupt {

namespace {
thread_local const std::atomic<bool>* t_flag = nullptr;
}  // namespace

const std::atomic<bool>* watch(const std::atomic<bool>* flag) noexcept {
  const std::atomic<bool>* previous = t_flag;
  t_flag = flag;
  return previous;
}

void check() {
  if (t_flag && t_flag->load(std::memory_order_relaxed)) throw Error(ErrorKind::usage, "interrupted");
}

}  // namespace bnorm::interrupt

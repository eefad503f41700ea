// The public API's interruption (include/bnorm/interrupt.h).
#include <bnorm/interrupt.h>

#include "core/interrupt.h"

namespace bnorm::api {

InterruptScope::InterruptScope(const std::atomic<bool>& flag) noexcept : previous_(interrupt::watch(&flag)) {}

InterruptScope::~InterruptScope() { interrupt::watch(previous_); }

}  // namespace bnorm::api

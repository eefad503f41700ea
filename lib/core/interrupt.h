// Stopping long work from outside the thread that does it (the public
// side is <bnorm/interrupt.h>): a thread's evaluator checks the flag that
// thread watches before each node it runs and, once the flag is set,
// stops with Error(usage, "interrupted"). With no flag watched (the
// default, and the CLI's case: it dies of its signals) a check is one
// thread_local load.
#pragma once

#include <atomic>

namespace bnorm::interrupt {

// The flag the calling thread's work checks from now on (nullptr: none);
// returns the one it checked before.
const std::atomic<bool>* watch(const std::atomic<bool>* flag) noexcept;

// Throws Error(usage, "interrupted") when the calling thread's flag is set.
void check();

}  // namespace bnorm::interrupt

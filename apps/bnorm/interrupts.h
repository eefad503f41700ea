// SIGINT, SIGTERM and SIGHUP in the CLI: whenever one arrives, every
// named temporary file of an unfinished output is removed
// (remove_unfinished_outputs in model/output_file.h), a progress line is
// cleared, and bnorm dies of the same signal with its default action, so
// that the shell sees it (status 128 + n). A signal the parent ignores
// (nohup's SIGHUP) stays ignored.
//
// The signals are blocked in every thread and taken by one thread of their
// own (sigwait), so the cleanup runs as ordinary code, not in a handler.
// The library installs nothing: in-process users keep their own handlers.
#pragma once

#include <functional>

namespace bnorm::cli {

// Call first in main(), before any other thread starts. `before_death` runs
// on the signal's thread after the cleanup (the progress line's eraser).
void handle_interrupts(std::function<void()> before_death);

}  // namespace bnorm::cli

// What bnorm writes to stderr besides results: errors, warnings and -v's
// logs in one format ("bnorm: LEVEL: message"), in colour when asked, and
// a progress line while long work runs.
//
// Colour (errors red, warnings yellow): --color always; never with --color
// never or NO_COLOR set (https://no-color.org); else (auto) when stderr is
// a terminal and TERM is not "dumb".
// The progress line: only when stderr is a terminal, CI is not set, -q is
// not given, and a phase has run for about a second (BNORM_PROGRESS_DELAY_MS
// changes that delay, for tests); redrawn ten times a second on one line,
// erased before any other message and when the work ends.
#pragma once

#include <string>

namespace bnorm::cli {

enum class ColorChoice { automatic, always, never };

struct TerminalOptions {
  ColorChoice color = ColorChoice::automatic;
  int verbosity = 0;  // -1 quiet, 0 warnings, 1 -v, 2 -vv
};

// Sets the logger's level, sinks and the progress listener.
void setup_terminal(const TerminalOptions& o);

// "bnorm: error: MESSAGE" and an optional "  hint: ..." line, coloured like
// the warnings.
void print_error_line(const std::string& message, const std::string& hint);

// Erases the progress line if one is drawn (before the process dies of a
// signal). Safe from any thread.
void erase_progress() noexcept;

}  // namespace bnorm::cli

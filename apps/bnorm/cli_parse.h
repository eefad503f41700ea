// The command line in bnorm's own words: CLI11's parse errors rewritten
// ("--to: 'fifteen' is not an integer"), did-you-mean for a misspelt
// command or option, and option values checked with messages that say what
// was expected.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bnorm::cli {

struct UsageError {
  std::string message, hint;
};

// The candidate closest to `word` (an edit distance of at most 2, at most 1
// for words of 4 characters or less; a candidate `word` is a prefix of also
// counts), or "" when none is close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

// Every option spelling `app` takes ("--verify", "-o"), its parents' too.
std::vector<std::string> option_spellings(const CLI::App& app);

// A CLI11 parse error of the command `command` ("bnorm fold") as bnorm's
// message and hint.
UsageError explain_parse_error(const CLI::ParseError& e, const CLI::App& app, const std::string& command);

// Option values: Error(usage) naming the option and what it takes.
int64_t int_value(const std::string& option, const std::string& text, int64_t lo, int64_t hi);
uint64_t seed_value(const std::string& option, const std::string& text);
double tolerance_value(const std::string& option, const std::string& text);

// Error(usage) when `option` was given on `app` but `needs` says it has no
// effect: "OPTION has no effect WHY".
void refuse_without_effect(const CLI::App& app, const std::string& option, bool has_effect, const std::string& why);
bool given(const CLI::App& app, const std::string& option);

}  // namespace bnorm::cli

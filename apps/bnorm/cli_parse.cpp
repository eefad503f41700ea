#include "cli_parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>

#include "core/error.h"

namespace bnorm::cli {

namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated
// edits of one substring): a swap of two neighbours counts as one edit.
size_t distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string usage_hint(const std::string& command) { return fmt::format("'{} --help' shows the usage", command); }

// "--to" for an option's message; positionals by their name in capitals.
std::string display_name(const std::string& name) {
  if (name.empty() || name[0] == '-') return name;
  std::string up = name;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  return up;
}

UsageError unknown_argument(const std::string& arg, const CLI::App& app, const std::string& command) {
  if (arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1]))) {
    const std::string name = arg.substr(0, arg.find('='));
    const std::string near = closest(name, option_spellings(app));
    return {fmt::format("unknown option '{}' for '{}'", name, command),
            near.empty() ? usage_hint(command) : fmt::format("did you mean '{}'? ({})", near, usage_hint(command))};
  }
  return {fmt::format("unexpected argument '{}' for '{}'", arg, command), usage_hint(command)};
}

}  // namespace

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  const size_t limit = word.size() <= 4 ? 1 : 2;
  for (const auto& c : candidates) {
    size_t d = distance(word, c);
    if (word.size() >= 3 && c.rfind(word, 0) == 0) d = std::min<size_t>(d, 1);
    if (d <= limit && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::vector<std::string> option_spellings(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* a = &app; a; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const auto& l : o->get_lnames()) out.push_back("--" + l);
      for (const auto& s : o->get_snames()) out.push_back("-" + s);
    }
  }
  return out;
}

UsageError explain_parse_error(const CLI::ParseError& e, const CLI::App& app, const std::string& command) {
  const std::string what = e.what();
  std::smatch m;
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    static const std::regex extras("^The following arguments? (?:was|were) not expected: (.*)$");
    if (std::regex_match(what, m, extras)) {
      std::vector<std::string> args;
      std::string rest = m[1];
      // CLI11 joins them with spaces; the first is the one to explain.
      const std::string first = rest.substr(0, rest.find(' '));
      return unknown_argument(first, app, command);
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    static const std::regex required("^(.*) is required$");
    if (what == "A subcommand is required") {
      return {"no command given", "the commands are inspect, fold, eval and upgrade ('bnorm help' says more)"};
    }
    if (std::regex_match(what, m, required)) {
      const std::string name = m[1];
      if (name == "model" || name == "paths") return {fmt::format("'{}' needs a model", command), usage_hint(command)};
      return {fmt::format("'{}' needs {}", command, display_name(name)), usage_hint(command)};
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    static const std::regex missing("^(.*): [0-9]+ required (.*) missing$");
    static const std::regex at_most("^(.*): At Most ([0-9]+) required but received ([0-9]+)$");
    if (std::regex_match(what, m, missing)) {
      return {fmt::format("{} needs a value", display_name(m[1])), usage_hint(command)};
    }
    if (std::regex_match(what, m, at_most)) {
      return {fmt::format("{} is given {} times; give it once", display_name(m[1]), std::string(m[3])),
              usage_hint(command)};
    }
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) || dynamic_cast<const CLI::ConversionError*>(&e)) {
    static const std::regex member("^(.*): (.*) not in \\{(.*)\\}$");
    static const std::regex convert("^Could not convert: (.*) = (.*)$");
    if (std::regex_match(what, m, member)) {
      std::string choices = m[3];
      std::replace(choices.begin(), choices.end(), ',', '|');
      return {fmt::format("{}: '{}' is not one of {}", display_name(m[1]), std::string(m[2]), choices),
              usage_hint(command)};
    }
    if (std::regex_match(what, m, convert)) {
      return {fmt::format("{}: '{}' is not a valid value", display_name(m[1]), std::string(m[2])),
              usage_hint(command)};
    }
  }
  // Anything else CLI11 says, lower-cased at its start, in bnorm's format.
  std::string text = what;
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return {text, usage_hint(command)};
}

int64_t int_value(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    throw Error(ErrorKind::usage, fmt::format("{}: '{}' is not an integer", option, text));
  }
  if (v < lo || v > hi) {
    throw Error(ErrorKind::usage, fmt::format("{}: {} is outside {} to {}", option, text, lo, hi));
  }
  return v;
}

uint64_t seed_value(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  const unsigned long long v = digits ? std::strtoull(text.c_str(), &end, 10) : 0;
  if (!digits || errno == ERANGE) {
    throw Error(ErrorKind::usage,
                fmt::format("{}: '{}' is not a seed (an integer from 0 to 18446744073709551615)", option, text));
  }
  return v;
}

double tolerance_value(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 0) {
    throw Error(ErrorKind::usage, fmt::format("{}: '{}' is not a tolerance (a number >= 0)", option, text));
  }
  return v;
}

bool given(const CLI::App& app, const std::string& option) {
  const CLI::Option* o = app.get_option_no_throw(option);
  return o && o->count() > 0;
}

void refuse_without_effect(const CLI::App& app, const std::string& option, bool has_effect, const std::string& why) {
  if (has_effect || !given(app, option)) return;
  throw Error(ErrorKind::usage, fmt::format("{} has no effect {}", option, why));
}

}  // namespace bnorm::cli

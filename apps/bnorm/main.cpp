// bnorm: the command-line tool. Parses the command line, runs one command,
// and maps every error to an exit code here, once:
//   0 success, 1 a numeric check failed, 2 bad usage or bad input.
// A signal (SIGINT, SIGTERM, SIGHUP) removes what bnorm was writing and
// ends it by that signal (interrupts.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <omp.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>

#include "cli_parse.h"
#include "commands.h"
#include "core/error.h"
#include "interrupts.h"
#include "terminal.h"

// OpenMP's threads wait for work passively (sleeping) unless the user
// chose (OMP_WAIT_POLICY, GOMP_SPINCOUNT): libgomp's default spins up to
// about 3 ms after each parallel region, which took the second core's time
// so that two threads ran ResNet-18 no faster than one (docs/performance.md).
// libgomp reads its variables once, before main (libc's own initializer
// restores the environment a preinit function could set), so bnorm sets the
// policy and starts itself again, the same process image: before anything
// else runs, once (the variable is then set), only for the commands that
// evaluate models (eval, fold, upgrade: the exec costs about 2.5 ms) and
// only where OpenMP may use more than one thread. When the exec fails,
// bnorm goes on as it is.
namespace {
void wait_passively(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  const char* command = nullptr;  // the first word that is no option
  for (int i = 1; i < argc && !command; ++i) {
    if (argv[i][0] != '-') command = argv[i];
  }
  if (!command || (std::strcmp(command, "eval") && std::strcmp(command, "fold") && std::strcmp(command, "upgrade"))) {
    return;
  }
  if (omp_get_max_threads() < 2) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OMP_WAIT_POLICY");  // not taken: as before
}
}  // namespace

namespace bnorm::cli {

void print_error(const std::string& message, const std::string& hint) {
  std::cout.flush();
  print_error_line(message, hint);
}

namespace {
std::ostream* report_stream = &std::cout;
bool quiet = false;
// Where a report to stderr goes under -q: nowhere (stderr carries errors only).
std::ostream discard(nullptr);
}  // namespace

std::ostream& report_out() { return *report_stream; }
void report_to_stderr(bool json) { report_stream = quiet && !json ? &discard : &std::cerr; }
void set_quiet(bool q) { quiet = q; }

namespace {
bool json_errors_on = false;
}  // namespace

void json_errors(bool on) { json_errors_on = on; }
void json_error_printed() { json_errors_on = false; }

// The error as the JSON document --json promises, when one is owed.
void print_json_error(const std::string& message, const std::string& hint, int code) {
  if (!json_errors_on) return;
  nlohmann::json j{{"schema", "bnorm.error/1"}, {"error", message}, {"exit_code", code}};
  if (!hint.empty()) j["hint"] = hint;
  report_out() << json_text(j) << "\n";
}

}  // namespace bnorm::cli

namespace {

using bnorm::cli::print_error;

const std::vector<std::string> kCommands{"inspect", "fold", "eval", "upgrade", "help", "version"};

// The first argument that is not a global option: the command, if any.
std::string command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--color") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return a;
  }
  return {};
}

int run(int argc, char** argv) {
  CLI::App app{"bnorm: the normalization nodes of ONNX models, and the whole models around them"};
  app.name("bnorm");
  app.fallthrough();  // global options after the command too: bnorm fold ... -q
  app.require_subcommand(1, 1);
  int verbosity = 0;
  bool quiet = false, version = false;
  std::string color = "auto";
  app.add_flag("-v,--verbose", verbosity, "Tell what bnorm is doing: each phase with its time; -vv: each node");
  app.add_flag("-q,--quiet", quiet, "Print errors only: no warnings, no progress line");
  app.add_option("--color", color, "Colour errors and warnings: auto (a terminal, without NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--version", version, "Print the version and what bnorm was built with, and exit");

  std::map<CLI::App*, bnorm::cli::Runner> runners;
  auto add = [&](bnorm::cli::Runner (*f)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    bnorm::cli::Runner r = f(app);
    runners[app.get_subcommands({}).at(before)] = std::move(r);
  };
  add(bnorm::cli::add_inspect);
  add(bnorm::cli::add_fold);
  add(bnorm::cli::add_eval);
  add(bnorm::cli::add_upgrade);
  add(bnorm::cli::add_help);
  add(bnorm::cli::add_version);
  add(bnorm::cli::add_completion);

  const std::string first = command_word(argc, argv);
  if (!first.empty() && std::find(kCommands.begin(), kCommands.end(), first) == kCommands.end() &&
      first != "completion") {
    const std::string near = bnorm::cli::closest(first, kCommands);
    print_error(fmt::format("unknown command '{}'", first),
                near.empty() ? "the commands are inspect, fold, eval and upgrade ('bnorm help' says more)"
                             : fmt::format("did you mean 'bnorm {}'?", near));
    return bnorm::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (version && dynamic_cast<const CLI::RequiredError*>(&e)) {
      return bnorm::cli::print_version(false);
    }
    // bnorm's own words for CLI11's errors, naming the command being parsed.
    const CLI::App* at = &app;
    std::string command = "bnorm";
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->parsed()) {
        command += " " + sub->get_name();
        at = sub;
      }
    }
    const auto u = bnorm::cli::explain_parse_error(e, *at, command);
    print_error(u.message, u.hint);
    return bnorm::kExitBadInput;
  }
  if (quiet && verbosity > 0) throw bnorm::Error(bnorm::ErrorKind::usage, "-q and -v contradict each other: give one");
  bnorm::cli::TerminalOptions term;
  term.color = color == "always" ? bnorm::cli::ColorChoice::always
               : color == "never" ? bnorm::cli::ColorChoice::never
                                  : bnorm::cli::ColorChoice::automatic;
  term.verbosity = quiet ? -1 : std::min(verbosity, 2);
  bnorm::cli::setup_terminal(term);
  bnorm::cli::set_quiet(quiet);
  if (version) return bnorm::cli::print_version(false);
  for (auto& [sub, runner] : runners) {
    if (sub->parsed()) return runner();
  }
  return bnorm::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  wait_passively(argc, argv);
  // Past a file size limit (ulimit -f), a write fails with EFBIG like on a
  // full disk, and is reported and cleaned up, instead of killing bnorm
  // with its temporary files left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  bnorm::cli::handle_interrupts(bnorm::cli::erase_progress);
  try {
    return run(argc, argv);
  } catch (const bnorm::Error& e) {
    print_error(e.message(), e.hint());
    bnorm::cli::print_json_error(e.message(), e.hint(), e.exit_code());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    const char* hint = "the model or a tensor in it is larger than this machine can hold";
    print_error("out of memory", hint);
    bnorm::cli::print_json_error("out of memory", hint, bnorm::kExitBadInput);
    return bnorm::kExitBadInput;
  } catch (const std::exception& e) {
    const char* hint = "please report this with the input that caused it";
    print_error(std::string("unexpected: ") + e.what(), hint);
    bnorm::cli::print_json_error(std::string("unexpected: ") + e.what(), hint, bnorm::kExitBadInput);
    return bnorm::kExitBadInput;
  }
}

// bnorm: the command-line tool. Parses the command line, runs one command,
// and maps every error to an exit code here, once:
//   0 success, 1 a numeric check failed, 2 bad usage or bad input.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <iostream>
#include <map>
#include <new>

#include "commands.h"
#include "core/error.h"
#include "core/log.h"

namespace bnorm::cli {

void print_error(const std::string& message, const std::string& hint) {
  std::cerr << "bnorm: error: " << message << "\n";
  if (!hint.empty()) std::cerr << "  hint: " << hint << "\n";
}

}  // namespace bnorm::cli

namespace {

using bnorm::cli::print_error;

int run(int argc, char** argv) {
  CLI::App app{"bnorm: BatchNormalization and InstanceNormalization in ONNX models"};
  app.name("bnorm");
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", "bnorm 0.1.0");
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log details to stderr");
  app.add_flag("-q,--quiet", quiet, "Log errors only");

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

  const std::string first = argc > 1 ? argv[1] : "";
  const bool known = first == "inspect" || first == "fold" || first == "eval" || first == "upgrade";
  if (!first.empty() && first[0] != '-' && !known) {
    print_error(fmt::format("unknown command '{}'", argv[1]), "the commands are inspect, fold, eval and upgrade");
    return bnorm::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // bnorm's own format for CLI11's errors too, with the usage of the
    // command that was being parsed.
    std::string command = "bnorm";
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->parsed()) command += " " + sub->get_name();
    }
    print_error(e.what(), fmt::format("'{} --help' shows the usage", command));
    return bnorm::kExitBadInput;
  }
  bnorm::log().set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::warn);
  for (auto& [sub, runner] : runners) {
    if (sub->parsed()) return runner();
  }
  return bnorm::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f), a write fails with EFBIG like on a
  // full disk, and is reported and cleaned up, instead of killing bnorm
  // with its temporary files left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return run(argc, argv);
  } catch (const bnorm::Error& e) {
    print_error(e.message(), e.hint());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    print_error("out of memory", "the model or a tensor in it is larger than this machine can hold");
    return bnorm::kExitBadInput;
  } catch (const std::exception& e) {
    print_error(std::string("unexpected: ") + e.what(), "please report this with the input that caused it");
    return bnorm::kExitBadInput;
  }
}

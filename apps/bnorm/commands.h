// The subcommands. Each add_* registers its options on `app` and returns
// the function that runs it once parsing succeeded. Commands only parse
// options, call the library and print: results to stdout, logs to stderr.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>

#include "transforms/json_text.h"

namespace bnorm::cli {

using Runner = std::function<int()>;

// The one error format: "bnorm: error: MESSAGE" and an optional hint line, on stderr.
void print_error(const std::string& message, const std::string& hint);

// Where a command prints its report: stdout, or stderr when stdout carries
// the command's output itself (-o -, --report -, --junit -).
// Under -q (set_quiet) a text report sent to stderr is not printed at all
// (a JSON one, asked for, is).
std::ostream& report_out();
void report_to_stderr(bool json);
void set_quiet(bool quiet);

// With --json, an error that ends the command is also printed on
// report_out() as a JSON document (bnorm.error/1: error, hint, exit_code),
// so that a pipeline reading JSON always gets one; not when the command
// already printed its report with the error in it (json_error_printed).
void json_errors(bool on);
void json_error_printed();

Runner add_inspect(CLI::App& app);
Runner add_fold(CLI::App& app);
Runner add_eval(CLI::App& app);
Runner add_upgrade(CLI::App& app);
Runner add_help(CLI::App& app);
Runner add_version(CLI::App& app);
Runner add_completion(CLI::App& app);

// What `bnorm version` and `bnorm --version` print.
int print_version(bool json);

using bnorm::json_text;

}  // namespace bnorm::cli

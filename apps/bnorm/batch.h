// One model or several: the part of `fold` and `upgrade` that maps inputs
// to outputs and runs each model, so that one failing model does not stop
// the others. The per-model work stays in the command (and the library).
//
//   bnorm CMD IN.onnx -o OUT.onnx           one model, as always
//   bnorm CMD A.onnx B.onnx --output-dir D  each model to D/<its file name>
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/output_file.h"

namespace bnorm::cli {

struct OutputOptions {
  std::vector<std::string> inputs;
  std::string output, output_dir, external_data;
};

// Registers MODEL..., -o/--output, --output-dir and --external-data on `sub`.
void add_output_options(CLI::App* sub, OutputOptions& o);

struct ModelJob {
  std::string input, output;
  OutputTarget target;  // planned before any model is read
};

// How "wrote X" names an output: the path given, and what a stream is
// ("- (standard output)", "/dev/null (a character device)").
std::string written_name(const OutputTarget& t);

// Runs one model: prints its text report (json == nullptr) or fills *json
// with its report object, and sets *written when it wrote the output;
// returns its exit code. Throws Error on failure.
using RunOne = std::function<int(const ModelJob&, nlohmann::json* json, bool* written)>;

// Checks the options and every output location (usage errors, exit 2,
// before any model is read) and runs `one` on every model. A model written
// to standard output (-o -) sends the report to stderr (report_out() in commands.h). One model with -o: its output exactly as
// before, errors thrown to main. --output-dir: every model, each error
// reported and counted; text blocks or a JSON array; the worst exit code.
// `command` ("fold", "upgrade") names the JSON documents' schemas:
// bnorm.COMMAND/1 for one model's object, bnorm.COMMAND-batch/1 for the
// object --output-dir prints, which holds them in "models".
int run_models(const OutputOptions& o, bool json, const std::string& command, const RunOne& one);

}  // namespace bnorm::cli

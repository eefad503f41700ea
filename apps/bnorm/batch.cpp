#include "batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "commands.h"
#include "core/error.h"
#include "transforms/json_text.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace bnorm::cli {

void add_output_options(CLI::App* sub, OutputOptions& o) {
  sub->add_option("model", o.inputs, "The .onnx models to read (never modified)")->required();
  sub->add_option("-o,--output", o.output, "Where to write the model (one input; - for standard output)");
  sub->add_option("--output-dir", o.output_dir,
                  "Write each model to DIR/<its file name> (one or more inputs; DIR must exist)");
  sub->add_option("--external-data", o.external_data,
                  "Side file for external data, relative to the output (default: OUTPUT.data; one input only)");
}

namespace {

std::vector<ModelJob> plan_jobs(const OutputOptions& o, bool as_json) {
  if (!o.output.empty() && !o.output_dir.empty()) throw Error(ErrorKind::usage, "give -o or --output-dir, not both");
  if (o.output_dir.empty()) {
    if (o.output.empty()) throw Error(ErrorKind::usage, "give -o OUTPUT (one model) or --output-dir DIR");
    if (o.inputs.size() != 1) {
      throw Error(ErrorKind::usage, fmt::format("-o names one output, but {} models were given", o.inputs.size()),
                  "use --output-dir DIR for several models");
    }
    ModelJob job{o.inputs[0], o.output, plan_output(o.output)};
    if (job.target.is_stdout()) report_to_stderr(as_json);
    return {job};
  }
  if (o.output_dir == "-") {
    throw Error(ErrorKind::usage, "--output-dir names a folder, not standard output", "write one model with -o -");
  }
  std::error_code ec;
  if (!fs::is_directory(o.output_dir, ec)) {
    throw Error(ErrorKind::usage, fmt::format("--output-dir '{}' is not an existing directory", o.output_dir));
  }
  if (!o.external_data.empty() && o.inputs.size() > 1) {
    throw Error(ErrorKind::usage, "--external-data names one side file: give it with one model only",
                "without it, each model's external data goes to DIR/<its file name>.data");
  }
  std::map<std::string, std::string> seen;  // output file name -> input
  std::vector<ModelJob> jobs;
  for (const auto& in : o.inputs) {
    const std::string name = fs::path(in).filename().string();
    if (name.empty() || name == "." || name == "..") {
      throw Error(ErrorKind::usage, fmt::format("'{}' does not name a model file", in));
    }
    const auto [it, fresh] = seen.emplace(name, in);
    if (!fresh) {
      throw Error(ErrorKind::usage,
                  fmt::format("'{}' and '{}' would both be written to '{}'", it->second, in,
                              (fs::path(o.output_dir) / name).string()),
                  "models written to one --output-dir need different file names");
    }
    const std::string out = (fs::path(o.output_dir) / name).string();
    jobs.push_back({in, out, plan_output(out)});
  }
  return jobs;
}

// Errors about the model name it; usage errors (an option's value) do not.
void name_input(Error& e, const ModelJob& job) {
  if (e.kind() != ErrorKind::usage) e.in_file(job.input);
}

}  // namespace

std::string written_name(const OutputTarget& t) {
  return t.is_stream() ? fmt::format("{} ({})", t.given, t.what) : t.given;
}

int run_models(const OutputOptions& o, bool as_json, const std::string& command, const RunOne& one) {
  json_errors(as_json);
  const std::vector<ModelJob> jobs = plan_jobs(o, as_json);
  const std::string schema = "bnorm." + command + "/1";
  // The schema first in each object (nlohmann's objects are sorted by key).
  auto with_schema = [&](json j) {
    j["schema"] = schema;
    return j;
  };
  if (o.output_dir.empty()) {
    json j;
    int code = kExitOk;
    try {
      bool written = false;
      code = one(jobs[0], as_json ? &j : nullptr, &written);
    } catch (Error& e) {
      name_input(e, jobs[0]);
      // A report made before the error (the model could not be saved) is
      // still printed, with the error in it.
      if (as_json && !j.is_null()) {
        j["error"] = e.message();
        if (!e.hint().empty()) j["hint"] = e.hint();
        j["exit_code"] = e.exit_code();
        report_out() << json_text(with_schema(j)) << "\n";
        json_error_printed();
      }
      throw;
    }
    if (as_json) {
      j["exit_code"] = code;
      report_out() << json_text(with_schema(j)) << "\n";
    }
    return code;
  }
  int worst = kExitOk, written = 0, failed = 0;
  json all = json::array();
  for (const auto& job : jobs) {
    if (!as_json) report_out() << fmt::format("{} -> {}\n", job.input, job.output);
    json j;
    int code = kExitBadInput;
    bool wrote = false;
    std::string error, hint;
    try {
      code = one(job, as_json ? &j : nullptr, &wrote);
    } catch (Error& e) {
      name_input(e, job);
      code = e.exit_code();
      error = e.message();
      hint = e.hint();
    } catch (const std::bad_alloc&) {
      error = job.input + ": out of memory";
    } catch (const std::exception& e) {
      error = job.input + ": unexpected: " + e.what();
    }
    if (!error.empty()) {
      print_error(error, hint);
      if (!as_json) report_out() << fmt::format("  error: {}\n", error);
      // A report made before the error (the model could not be saved) is kept.
      if (j.is_null()) j = json{{"input", job.input}, {"output", job.output}};
      else j["schema"] = schema;
      j["error"] = error;
      if (!hint.empty()) j["hint"] = hint;
    }
    j["exit_code"] = code;
    if (error.empty()) j["schema"] = schema;
    all.push_back(j);
    worst = std::max(worst, code);
    (wrote ? written : failed) += 1;
  }
  if (as_json) {
    report_out() << json_text({{"schema", "bnorm." + command + "-batch/1"}, {"models", all}, {"written", written},
                               {"not_written", failed}, {"exit_code", worst}})
                 << "\n";
  }
  else report_out() << fmt::format("{} models: {} written, {} not written\n", jobs.size(), written, failed);
  return worst;
}

}  // namespace bnorm::cli

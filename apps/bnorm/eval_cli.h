// The parts of `bnorm eval` shared by its files: the options, input
// gathering, the compare/trace run and its reports.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/backend/folders.h"
#include "eval/report/compare.h"
#include "eval/report/html.h"
#include "eval/report/trace.h"
#include "model/model.h"
#include "model/output_file.h"
#include "model/tensor.h"

namespace bnorm::cli {

struct EvalCliOptions {
  std::vector<std::string> paths;
  std::vector<std::string> inputs, dims, ranges;
  std::string filter, output_dir, compare;
  std::optional<uint64_t> seed;
  std::optional<double> rtol, atol;
  std::string seed_text, rtol_text, atol_text;
  std::string tolerance, error_stat = "max";  // --compare's criterion (api::compare_criterion)
  bool json = false;
  bool trace = false;
  bool float64 = false;  // one model run in float64 (eval/run/float64.h)
  int repeat = 1;        // one model run this many times, timed (--repeat)
  std::string inputs_dir, junit, report;
  // --junit and --report, planned before any work.
  OutputTarget junit_target, report_target;
};

// One set of inputs for a model: its name ("test_data_set_0", or the
// folder's name) and the tensors by graph input name.
struct InputSet {
  std::string name;
  std::map<std::string, Tensor> inputs;
};

// --inputs DIR: its test_data_set_* folders (input_N.pb in graph-input
// order, initializers excluded; or files named after the inputs), else the
// folder itself as one set of files named after the inputs (NAME.pb,
// NAME.npy). Error(usage) when DIR holds no input of the model.
std::vector<InputSet> read_input_sets(const std::filesystem::path& dir, const Model& model);

// --input files, then --random data for the rest when `random`.
std::map<std::string, Tensor> gather_inputs(const EvalCliOptions& o, const Model& model, bool random);

std::string diff_text(const Diff& d);

// One compared value's verdict under its criterion ("error max ..., p99 ...
// (A's own: ...): within A's own rounding", codes, magnitude, or fixed).
std::string verdict_text(const TracedValue& v);

// The whole-model line of fold and upgrade --verify: every value both
// models compute judged (compare_models.h), `a` naming the reference model.
std::string verify_model_text(const TraceResult& r, const std::string& a);

// eval A --compare B [--trace] [--inputs DIR] [--junit F] [--report F].
int run_compare(const EvalCliOptions& o);

// One conformance folder's result and how long it took.
using DirResult = FolderRow;

// --junit: one testcase per folder; one per compared output of A.
std::string dirs_junit(const std::vector<DirResult>& results);
std::string compare_junit(const EvalCliOptions& o, const TraceResult& r);

// Writes `text` to `target` (--junit, --report), through the one writer.
void write_report_file(const OutputTarget& target, const std::string& text);

}  // namespace bnorm::cli

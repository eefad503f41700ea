// ONNX's backend test layout: a folder with model.onnx and
// test_data_set_*/input_N.pb, output_N.pb (N in graph input/output order,
// initializers excluded). run_backend_test() evaluates every data set and
// compares each output; a folder whose model uses an op the evaluator does
// not implement, a non-tensor input or output, or a case the evaluator
// reports as unsupported, is skipped with the reason. ONNX stores bfloat16 test
// data as uint16 bit patterns; they are read as bfloat16 where the model
// declares bfloat16.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "eval/report/compare.h"
#include "eval/run/evaluator.h"
#include "eval/run/op.h"

namespace bnorm {

struct OutputResult {
  std::string name;
  Diff diff;
};

struct DataSetResult {
  std::string name;  // "test_data_set_0"
  std::vector<OutputResult> outputs;
};

struct BackendTestResult {
  std::string name;  // the folder's name
  std::filesystem::path dir;
  bool skipped = false;
  std::string skip_reason;
  std::string error;  // the model or its data could not be evaluated
  std::vector<DataSetResult> data_sets;
  bool pass() const;
};

// A folder holding model.onnx.
bool is_backend_test_dir(const std::filesystem::path& dir);
// `root` itself if it is a test folder, else its test sub-folders, sorted.
// Throws Error(input) naming `root` when it is not a directory or holds no
// test folder.
std::vector<std::filesystem::path> find_backend_tests(const std::filesystem::path& root);
// The first op in any graph of the model the evaluator lacks; empty if none.
std::string first_unsupported_op(const std::filesystem::path& model);

// `tol`, except where a folder's expected data are known to carry noise
// (the inverse-DFT folders: atol at least 1e-6; docs/semantics.md).
BackendTestResult run_backend_test(const std::filesystem::path& dir, const Tolerance& tol);

}  // namespace bnorm

// Tracing where two models' numbers part: both run on the same inputs and
// every value they share is compared once both have produced it
// (bnorm eval A --compare B --trace).
//
// Contract:
// - Shared values are node outputs of the main graphs matched by name, after
//   each model's rename map (metadata_props key "bnorm.renames", a JSON
//   object {new name: old name} that a transform writing the model records
//   for values it renamed) maps its names back to the old ones. Graph outputs
//   without a counterpart of that name pair by position, as in --compare.
// - The models run one after the other, A first. While A runs, each shared
//   value it produces is written to an unnamed temporary file (TMPDIR,
//   removed on exit or error); while B runs, each shared value it produces
//   is compared with A's, read back, and both are dropped. Memory: a plain
//   compare's (one model's run at a time) plus one of A's values; disk: A's
//   shared values of one input set.
// - B is compared against A (A's value is the expected one), element by
//   element as compare() does, with model_compare_tolerance of A's type
//   unless rtol/atol are given. Several data sets merge: maxima of the
//   errors, sums of the counts and histograms.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/report/compare.h"
#include "model/model.h"
#include "model/tensor.h"

namespace bnorm {

inline constexpr const char* kRenamesKey = "bnorm.renames";

// The model's rename map {new: old}; empty without one. A value that is not
// a JSON object of strings is Error(input).
std::map<std::string, std::string> read_renames(const Model& m);

// Histogram of element errors |b - a|: bin 0 exactly 0; bins 1..16 the
// decades [10^(k-14), 10^(k-13)) with bin 1 everything below 1e-12 and bin
// 16 everything from 1e2; bin 17 NaN/infinity mismatches.
inline constexpr int kErrorBins = 18;
std::string error_bin_label(int bin);

struct ValueDiff {
  Diff diff;            // as compare(a, b, tol)
  double max_ulp = 0;   // float types: largest distance in units in the last place of the type
  double worst = 0;     // largest |b - a| / (atol + rtol * |a|): above 1 is outside tolerance
  std::array<int64_t, kErrorBins> histogram{};
  std::vector<double> channel_max;  // rank-4 values: largest |b - a| per index of axis 1
  void merge(const ValueDiff& other);
};

ValueDiff diff_values(const Tensor& a, const Tensor& b, const Tolerance& tol);

struct TracedValue {
  std::string name;        // in A
  std::string name_b;      // in B
  std::string producer_a;  // node labels (model/node_label.h)
  std::string producer_b;
  int64_t order = 0;       // position among the shared values in the order A produced them
  bool output = false;     // a graph output of A
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
  Tolerance tol;
  ValueDiff diff;
};

struct TraceResult {
  std::vector<TracedValue> values;  // in A's order
  int first = -1;                   // index in values of the first one outside tolerance
  std::vector<std::string> path;    // A's nodes from a graph input to the first divergence
  int data_sets = 0;
  int uncompared = 0;               // shared names only one model produced (max over sets)
  size_t peak_kept_bytes = 0;       // most bytes of A's values in memory at once (read back for comparing)
  size_t spilled_bytes = 0;         // bytes of A's values written to the temporary file (most over the sets)
};

struct TraceOptions {
  std::optional<double> rtol, atol;
};

class Tracer {
 public:
  Tracer(const Model& a, const Model& b, TraceOptions options = {});
  // One data set; errors name the model they happened in.
  void run(const std::map<std::string, Tensor>& inputs);
  TraceResult result() const;

 private:
  class Spill;
  void record(const std::string& key, const Tensor& a, const Tensor& b, const std::string& producer_a,
              const std::string& producer_b, int64_t order);

  const Model& a_;
  const Model& b_;
  TraceOptions options_;
  std::map<std::string, std::string> canon_[2];  // produced name -> shared key
  std::map<std::string, std::string> names_[2];  // shared key -> name in that model
  std::map<std::string, size_t> index_;          // shared key -> values_
  std::vector<TracedValue> values_;
  int data_sets_ = 0, uncompared_ = 0;
  size_t peak_ = 0, spilled_ = 0;
};

}  // namespace bnorm

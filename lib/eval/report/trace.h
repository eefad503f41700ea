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
// - Each value is judged by the options' criterion (TracedValue::judge):
//   with the auto criterion, A also runs in float64 (eval/run/float64.h)
//   between the two, each shared value's float64 twin written to a second
//   temporary file, and B's value is judged against A's own rounding
//   (rounding.h); where A has no float64 evaluation, relative to the value's
//   magnitude; with the fixed one, element by element within rtol/atol of A
//   (compare()). Several data sets merge: maxima of the errors, sums of
//   the counts and histograms.
// - Quantizers' codes (QuantizeLinear, DynamicQuantizeLinear output 0 of
//   A) are compared as codes (codes.h; auto criterion only): their float inputs, A's and B's,
//   are held from when B produces them until the quantizer's codes are
//   judged. Codes that differ only by rounding flips pass (explained); when
//   some value of a set is outside while every flip is rounding, B runs
//   again with A's codes in place of its flipped ones (a second Tracer), and
//   each value inside then is explained: it differed only by the flips.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/report/codes.h"
#include "eval/report/compare.h"
#include "eval/report/rounding.h"
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

// How B's values are judged (docs/cli.md, --tolerance).
enum class Criterion {
  fixed,     // element by element within rtol/atol of A (compare())
  rounding,  // against A's own rounding, with A's float64 evaluation (rounding.h)
  scaled,    // relative to the output's magnitude, where A has no float64 evaluation
};
const char* criterion_name(Criterion c);

struct CompareCriterion {
  bool fixed = false;  // --tolerance fixed (also when rtol or atol is given)
  std::optional<double> rtol, atol;
  std::string stat = "max";    // the scaled criterion's statistic
  std::optional<double> rel;   // the scaled criterion's tolerance (scaled_tolerance of the type otherwise)
};

// The element tolerance of the fixed criterion for A's type.
Tolerance fixed_tolerance(const CompareCriterion& c, DType t);

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
  // diff's pass, worst (error / allowed error) and mismatches (elements
  // outside) are the criterion's verdict; max_abs, max_rel, max_ulp and the
  // histogram are B against A whatever the criterion.
  ValueDiff diff;
  Criterion criterion = Criterion::fixed;
  RoundingDiff rounding;  // Criterion::rounding
  ScaledDiff scaled;      // Criterion::scaled
  // The codes of a quantizer (QuantizeLinear, DynamicQuantizeLinear output
  // 0) in both models, compared as codes (codes.h).
  std::optional<CodeDiff> codes;
  // Outside the criterion, but rounding: a quantizer's codes that differ
  // only by one-step flips the float inputs explain, or a value that agrees
  // when B runs again with A's codes in place of its flipped ones.
  bool explained = false;
  // Judges this value's (a, a64, b) of one data set by `criterion` (a64
  // unused unless rounding), replacing any earlier judgement.
  void judge(const Tensor& a, const Tensor* a64, const Tensor& b, const CompareCriterion& c);
  // Adds a later data set's judgement of the same value (maxima of the
  // errors, sums of the counts).
  void merge(const TracedValue& set);
};

struct TraceResult {
  std::vector<TracedValue> values;  // in A's order
  // With the auto criterion: why A has no float64 evaluation ("" when it
  // has one and B was judged against A's own rounding).
  bool auto_criterion = false;
  std::string float64_blocker;
  // Input sets where B ran a second time with A's codes in place of its
  // flipped ones (every flip rounding, and some value outside).
  int replayed = 0;
  int first = -1;                   // index in values of the first one outside tolerance
  std::vector<std::string> path;    // A's nodes from a graph input to the first divergence
  int data_sets = 0;
  int uncompared = 0;               // shared names only one model produced (max over sets)
  size_t peak_kept_bytes = 0;       // most bytes of A's values in memory at once (read back for comparing)
  size_t spilled_bytes = 0;         // bytes of A's values written to the temporary file (most over the sets)
};

struct TraceOptions {
  CompareCriterion criterion;
  // What errors of each model's run say (Error::context), and a hint for
  // errors of A's run ("" keeps the error's own).
  std::string a_role = "in the first model";
  std::string b_role = "in the second model, run on the inputs made for the first";
  std::string a_hint;
  // B's node outputs (by B's names) replaced by these tensors: the replay
  // with A's codes. Set by the Tracer itself.
  const std::map<std::string, Tensor>* replace_b = nullptr;
};

class Tracer {
 public:
  Tracer(const Model& a, const Model& b, TraceOptions options = {});
  // One data set; errors name the model they happened in.
  void run(const std::map<std::string, Tensor>& inputs);
  TraceResult result() const;

 private:
  class Spill;
  // Judges one shared value of one set; returns whether it was inside the
  // criterion in this set.
  bool record(const std::string& key, const Tensor& a, const Tensor* a64, const Tensor& b,
              const std::string& producer_a, const std::string& producer_b, int64_t order, const CodeDiff* codes);

  // A's quantizers: code key -> the node (in A's main graph).
  std::map<std::string, const onnx::NodeProto*> quantizers_;
  // Keys of quantizer float inputs -> how many quantizers read them.
  std::map<std::string, int> quantizer_inputs_;
  CodeDiff compare_codes(const std::string& key, const Tensor& a, const Tensor& b,
                         const std::map<std::string, std::pair<Tensor, Tensor>>& held,
                         const std::map<std::string, Tensor>& inputs) const;

  const Model& a_;
  const Model& b_;
  TraceOptions options_;
  int replayed_ = 0;
  std::optional<Model> a64_;  // A promoted to float64 (auto criterion, when it has one)
  std::string blocker_;       // why it has none
  std::map<std::string, std::string> canon_[2];  // produced name -> shared key
  std::map<std::string, std::string> names_[2];  // shared key -> name in that model
  std::map<std::string, size_t> index_;          // shared key -> values_
  std::vector<TracedValue> values_;
  int data_sets_ = 0, uncompared_ = 0;
  size_t peak_ = 0, spilled_ = 0;
};

}  // namespace bnorm

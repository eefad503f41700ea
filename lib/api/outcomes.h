// The front door's work, for the CLI (internal: the public API is
// include/bnorm/). Each command's work returns an outcome (the library's
// own report types, which the CLI prints as text) and the outcome's JSON
// document is built here, once: `bnorm CMD --json` prints it, and the
// public API (bnorm::api::fold ...) returns it as its Report. The schemas
// are docs/schema/*.json.
#pragma once

#include <nlohmann/json.hpp>

#include <bnorm/eval.h>
#include <bnorm/fold.h>
#include <bnorm/inspect.h>
#include <bnorm/upgrade.h>

#include <optional>
#include <string>
#include <vector>

#include "eval/backend/folders.h"
#include "eval/report/compare.h"
#include "eval/report/html.h"
#include "eval/report/trace.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/norm_affine.h"
#include "transforms/fold/verify.h"
#include "transforms/fp16_risk.h"
#include "transforms/inspect.h"
#include "transforms/upgrade/types.h"
#include "transforms/upgrade/verify.h"
#include "transforms/value_shapes.h"

namespace bnorm::api {

// fold: the BatchNormalization folds, then (all_norms) the family's affine;
// with verify, each fold checked on the model as it was before it.
struct FoldOutcome {
  FoldReport bn;
  NormFoldReport norms;
  bool all_norms = false;
  bool verified = false;
  std::vector<FoldCheck> checks, norm_checks;
  // verify's whole-model check: every value both models compute, judged as
  // eval --compare does; or why it could not run (the per-fold checks are
  // then all there is).
  std::optional<TraceResult> whole;
  std::string whole_not_run;

  bool passed() const;          // every check holds (true without verify)
  bool nothing_folded() const;  // no node folded: the model is unchanged
};
FoldOutcome fold_model(Model& model, const FoldRequest& request);
nlohmann::json fold_document(const FoldOutcome& o, const FoldRequest& request, bool written);

// upgrade: the conversion, then the check and --verify (which can throw
// after the conversion: the CLI still prints the conversion's report).
struct UpgradeOutcome {
  UpgradeReport report;
  bool fuse_norms = false;
  bool checked = false;
  bool verified = false;
  UpgradeVerification verification;

  bool passed() const;
};
UpgradeOutcome convert_model(Model& model, const UpgradeRequest& request);
void check_and_verify(UpgradeOutcome& o, const Model* before, const Model& model, const UpgradeRequest& request);
nlohmann::json upgrade_document(const UpgradeOutcome& o, const UpgradeRequest& request, bool written);

// inspect
struct InspectOutcome {
  InspectReport report;
  std::optional<UpgradePlan> plan;
  std::optional<std::vector<Fp16Risk>> risks;
  bool measured = false;  // fp16 risks measured on inputs
  std::optional<std::vector<ValueShape>> shapes;  // --shapes
};
InspectOutcome inspect_model(const Model& model, const InspectRequest& request);
nlohmann::json inspect_document(const InspectOutcome& o, const InspectRequest& request);

// eval: two models compared (trace or outputs only), one model run, folders.
nlohmann::json diff_json(const Diff& d);
nlohmann::json compare_document(const TraceResult& r, const std::optional<std::string>& a,
                                const std::optional<std::string>& b, const std::optional<uint64_t>& seed, bool trace);
struct OutputStats {
  std::string name;
  Tensor tensor;
  std::vector<std::string> files;
};
// One model run `runs` times on the same inputs (bnorm eval --repeat),
// weights decoded once (EvalCache); with `float64`, in float64 (its
// blocker is Error(unsupported)).
struct Timing {
  int threads = 1;                      // OpenMP threads the runs could use
  std::vector<double> wall_ms, cpu_ms;  // per run; CPU: every thread of the process
  std::string differs;                  // the first output whose bits differ from run 1's, or ""
  int differing_run = 0;                // the first run (from 1) that differs, or 0
};
struct ModelRuns {
  std::map<std::string, Tensor> outputs;  // run 1's
  Timing timing;
};
ModelRuns run_model(const Model& model, const std::map<std::string, Tensor>& inputs, bool float64, int runs);
// "timing: 10 runs on 1 thread: first ..., fastest ..., median ...; CPU ...".
std::string timing_text(const Timing& t);
// `timing` only when the model ran more than once (the "timing" field, else null).
nlohmann::json model_document(const std::string& model, const std::vector<OutputStats>& outputs,
                              const std::optional<Timing>& timing = std::nullopt);
// min, max and mean of a tensor's elements (NaN-free when the tensor is)
struct Stats {
  double min, max, mean;
};
Stats stats_of(const Tensor& t);
nlohmann::json folders_document(const std::vector<FolderRow>& rows, const Tolerance& tol);

// Every document gets its "schema" ("bnorm.fold/1") first.
nlohmann::json with_schema(nlohmann::json doc, const std::string& kind);

// The criterion of --tolerance (empty: auto, unless rtol or atol is given,
// which mean fixed), --rtol, --atol and --error-stat; Error(usage) for an
// unknown tolerance or statistic, and for auto with rtol or atol.
// How a TraceResult was judged: "tolerance", "reference", "float64_blocker"
// and "values" of bnorm.eval-compare/2 (also upgrade --verify's "verify_model").
nlohmann::json judged_values_json(const TraceResult& r);

CompareCriterion compare_criterion(const std::string& tolerance, const std::optional<double>& rtol,
                                   const std::optional<double>& atol, const std::string& error_stat);


}  // namespace bnorm::api

// bnorm fold's work and its document (bnorm.fold/1).
#include <algorithm>
#include <optional>
#include <set>

#include "api/outcomes.h"
#include "core/error.h"
#include "core/log.h"
#include "eval/report/compare_models.h"
#include "model/model.h"
#include "transforms/upgrade/verify.h"

namespace bnorm::api {

namespace {

nlohmann::json optional_text(const std::optional<std::string>& s) { return s ? nlohmann::json(*s) : nlohmann::json(); }

nlohmann::json checks_json(const std::vector<FoldCheck>& checks, bool norm) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : checks) {
    out.push_back({{"graph", c.graph}, {norm ? "norm" : "bn", c.bn}, {norm ? "consumer" : "producer", c.producer},
                   {"type", c.type}, {"shape", c.shape}, {"max_abs", c.max_abs}, {"max_rel", c.max_rel},
                   {"rtol", c.rtol}, {"pass", c.pass}});
  }
  return out;
}

nlohmann::json generated_json(const std::vector<FoldReport::Generated>& gen) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : gen) {
    out.push_back({{"graph", g.graph}, {"label", g.node_label}, {"source", g.source}, {"new_bytes", g.new_bytes}});
  }
  return out;
}

// The norm folds' fields, added to the BN report's object (all_norms).
void add_norms_json(const NormFoldReport& r, nlohmann::json& out) {
  nlohmann::json folded = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& f : r.folded) {
    folded.push_back({{"graph", f.graph}, {"norm", f.norm}, {"norm_op", f.norm_op}, {"norm_label", f.norm_label},
                      {"norm_index", f.norm_index}, {"consumer", f.consumer}, {"consumer_op", f.consumer_op},
                      {"consumer_label", f.consumer_label}, {"bias_into", f.bias_into}});
  }
  for (const auto& s : r.skipped) {
    skipped.push_back({{"graph", s.graph}, {"norm", s.norm}, {"norm_op", s.norm_op}, {"norm_label", s.norm_label},
                       {"norm_index", s.norm_index}, {"reason", s.reason}});
  }
  out["norm_nodes"] = r.total;
  out["norms_folded"] = folded;
  out["norms_not_folded"] = skipped;
  for (const auto& w : r.warnings) out["warnings"].push_back(w);
  for (const auto& g : generated_json(r.generated)) out["generated"].push_back(g);
  if (!r.generated.empty()) {
    out["norm_model_bytes_before"] = r.model_bytes_before;
    out["norm_model_bytes_after"] = r.model_bytes_after;
  }
}

}  // namespace

bool FoldOutcome::passed() const {
  auto pass = [](const FoldCheck& c) { return c.pass; };
  const bool whole_pass = !whole || std::all_of(whole->values.begin(), whole->values.end(),
                                                [](const TracedValue& v) { return v.diff.diff.pass; });
  return whole_pass && std::all_of(checks.begin(), checks.end(), pass) &&
         std::all_of(norm_checks.begin(), norm_checks.end(), pass);
}

namespace {

constexpr const char* kInputRole = "while running the input model for --verify's whole-model check";

// verify's whole-model check (FoldOutcome::whole), or why it did not run.
void check_whole_model(FoldOutcome& o, const Model& before, const Model& after, const FoldRequest& request) {
  VerifyInputs in;
  in.seed = request.seed;
  in.dims = request.dims;
  in.given = request.inputs;
  in.sets = request.input_sets;
  for (const auto& vi : before.proto.graph().input())
    if (request.ranges.count(vi.name())) in.ranges[vi.name()] = request.ranges.at(vi.name());
  TraceOptions t;
  t.a_role = kInputRole;
  t.b_role = "while running the folded model for --verify's whole-model check";
  t.a_hint = kVerifyInputsHint;
  // The user's inputs must run, and the folded model wherever the input
  // model does; otherwise (random inputs the model cannot have, an op bnorm
  // eval does not run) the per-fold checks are all there is.
  const bool given = !request.inputs.empty() || !request.input_sets.empty();
  std::vector<std::map<std::string, Tensor>> sets;
  try {
    sets = verify_input_sets(before, in);
  } catch (const Error& e) {
    if (given) throw;
    o.whole_not_run = e.message();
    return;
  }
  try {
    o.whole = compare_models(before, after, sets, t, before.path.string(), "the folded model");
  } catch (const Error& e) {
    if (given || e.message().find(kInputRole) == std::string::npos) throw;
    o.whole_not_run = e.message();
  }
}

}  // namespace

bool FoldOutcome::nothing_folded() const { return bn.folded.empty() && norms.folded.empty(); }

FoldOutcome fold_model(Model& model, const FoldRequest& request) {
  FoldOutcome o;
  o.all_norms = request.all_norms;
  o.verified = request.verify;
  std::optional<Model> before, mid;
  if (request.verify) before = model;
  FoldOptions options;
  options.rewrite_on_save = true;  // --verify reads the folded weights through the rewrites
  options.keep_generated = request.keep_generated;
  Stopwatch took;
  o.bn = fold_batch_norms(model, options);
  log().debug("folded {} of {} BatchNormalization nodes ({:.1f} ms)", o.bn.folded.size(), o.bn.total, took.ms());
  if (request.verify && request.all_norms) mid = model;
  if (request.all_norms) {
    took = Stopwatch();
    o.norms = fold_norm_affines(model, options);
    log().debug("folded the affine of {} of {} normalization nodes ({:.1f} ms)", o.norms.folded.size(), o.norms.total,
                took.ms());
  }
  for (const auto& w : o.bn.warnings) log().warn("{}", w);
  for (const auto& w : o.norms.warnings) log().warn("{}", w);
  // Each check sees exactly its own fold: BN folds on the model as it was
  // before any fold against the model after the BN folds, norm folds on that
  // model against the final one.
  took = Stopwatch();
  if (before) o.checks = verify_folds(*before, mid ? *mid : model, o.bn, request.seed, request.ranges);
  if (mid) o.norm_checks = verify_norm_folds(*mid, model, o.norms, request.seed, request.ranges);
  if (before) check_whole_model(o, *before, model, request);
  // --input-range names the X of a fold verified (the input of its cut
  // models), or a graph input of the whole-model check.
  std::set<std::string> xs;
  for (const auto* checks : {&o.checks, &o.norm_checks})
    for (const auto& c : *checks) xs.insert(c.input);
  if (before) {
    std::set<std::string> inits;
    for (const auto& t : before->proto.graph().initializer()) inits.insert(t.name());
    for (const auto& vi : before->proto.graph().input())
      if (!inits.count(vi.name())) xs.insert(vi.name());
  }
  for (const auto& [name, range] : request.ranges) {
    if (xs.count(name)) continue;
    throw Error(ErrorKind::usage,
                fmt::format("--input-range {}: '{}' is no graph input and the input of no fold verified; those are: {}", name, name,
                            xs.empty() ? std::string("none") : "'" + fmt::format("{}", fmt::join(xs, "', '")) + "'"));
  }
  if (before) log().debug("verified {} folds ({:.1f} ms)", o.checks.size() + o.norm_checks.size(), took.ms());
  return o;
}

nlohmann::json fold_document(const FoldOutcome& o, const FoldRequest& request, bool written) {
  const FoldReport& r = o.bn;
  nlohmann::json folded = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& f : r.folded) {
    folded.push_back({{"graph", f.graph}, {"bn", f.bn}, {"bn_label", f.bn_label}, {"bn_index", f.bn_index},
                      {"producer", f.producer}, {"producer_label", f.producer_label}, {"producer_op", f.producer_op}});
  }
  for (const auto& s : r.skipped) {
    skipped.push_back({{"graph", s.graph}, {"bn", s.bn}, {"bn_label", s.bn_label}, {"bn_index", s.bn_index},
                       {"reason", s.reason}});
  }
  nlohmann::json out = {{"input", optional_text(request.input)}, {"output", optional_text(request.output)},
                        {"batch_norm_nodes", r.total}, {"folded", folded}, {"not_folded", skipped},
                        {"warnings", r.warnings}, {"generated", generated_json(r.generated)}};
  if (!r.generated.empty()) {
    out["model_bytes_before"] = r.model_bytes_before;
    out["model_bytes_after"] = r.model_bytes_after;
  }
  if (o.all_norms) add_norms_json(o.norms, out);
  if (o.verified) out["verify"] = checks_json(o.checks, false);
  if (o.verified && o.all_norms) out["verify_norms"] = checks_json(o.norm_checks, true);
  if (o.verified) {
    nlohmann::json whole = o.whole ? judged_values_json(*o.whole) : nlohmann::json::object();
    whole["ran"] = o.whole.has_value();
    whole["not_run"] = o.whole ? nlohmann::json(nullptr) : nlohmann::json(o.whole_not_run);
    out["verify_model"] = whole;
  }
  out["written"] = written;
  out["unchanged_copy"] = written && o.nothing_folded();
  out["exit_code"] = o.passed() ? 0 : 1;
  return with_schema(std::move(out), "bnorm.fold/1");
}

Report fold(Model& model, const FoldRequest& request) {
  const FoldOutcome o = fold_model(model, request);
  return Report{fold_document(o, request, false), o.passed() ? 0 : 1};
}

}  // namespace bnorm::api

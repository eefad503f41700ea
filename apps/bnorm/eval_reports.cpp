// bnorm eval's results as JUnit test cases (eval/report/junit.h): a
// conformance folder, or an output of A in --compare, is one testcase.
#include <fmt/format.h>

#include "eval/report/junit.h"
#include "eval_cli.h"

namespace bnorm::cli {

namespace {

std::string figures(const Diff& d) {
  return fmt::format("max abs {:.6g}, max rel {:.6g}, {} of {} elements outside tolerance{}", d.max_abs, d.max_rel,
                     d.mismatches, d.elements, d.problem.empty() ? "" : "; " + d.problem);
}

}  // namespace

std::string dirs_junit(const std::vector<DirResult>& results) {
  std::vector<JUnitCase> cases;
  for (const auto& [r, seconds] : results) {
    JUnitCase c;
    c.classname = "conformance";
    c.name = r.name;
    c.seconds = seconds;
    if (r.skipped) {
      c.status = JUnitCase::Status::skipped;
      c.message = r.skip_reason;
    } else if (!r.error.empty()) {
      c.status = JUnitCase::Status::error;
      c.message = r.error;
    } else if (!r.pass()) {
      c.status = JUnitCase::Status::failed;
      std::vector<std::string> bad;
      for (const auto& ds : r.data_sets) {
        for (const auto& out : ds.outputs) {
          if (out.diff.pass) continue;
          if (bad.empty()) c.message = fmt::format("{} {}: {}", ds.name, out.name, diff_text(out.diff));
          bad.push_back(fmt::format("{} {}: {}", ds.name, out.name, figures(out.diff)));
        }
      }
      c.details = fmt::format("{}\n", fmt::join(bad, "\n"));
    }
    cases.push_back(std::move(c));
  }
  return junit_xml("conformance", cases);
}

std::string compare_junit(const EvalCliOptions& o, const TraceResult& r) {
  std::vector<JUnitCase> cases;
  for (const auto& v : r.values) {
    if (!v.output) continue;
    JUnitCase c;
    c.classname = "compare";
    c.name = v.name;
    if (!v.diff.diff.pass) {
      c.status = JUnitCase::Status::failed;
      c.message = verdict_text(v);
      c.details = fmt::format("{} against {}, {} input set{}\n{}\nmax ulp {:.6g}; {}\n", o.compare, o.paths[0],
                              r.data_sets, r.data_sets == 1 ? "" : "s", figures(v.diff.diff), v.diff.max_ulp,
                              v.criterion == Criterion::fixed ? fmt::format("rtol {:g}, atol {:g}", v.tol.rtol, v.tol.atol)
                                                              : fmt::format("criterion {}", criterion_name(v.criterion)));
      if (o.trace && r.first >= 0) {
        const auto& f = r.values[r.first];
        c.details += fmt::format("first divergence: '{}' produced in A by {}, in B by {}: {}\n", f.name, f.producer_a,
                                 f.producer_b, figures(f.diff.diff));
      }
    }
    cases.push_back(std::move(c));
  }
  // With the auto criterion every shared value counts: one case for those
  // inside both models.
  if (r.auto_criterion) {
    JUnitCase c;
    c.classname = "compare";
    c.name = "values inside both models";
    std::vector<std::string> bad;
    for (const auto& v : r.values)
      if (!v.output && !v.diff.diff.pass) bad.push_back(fmt::format("'{}' (produced in A by {}): {}", v.name, v.producer_a, verdict_text(v)));
    if (!bad.empty()) {
      c.status = JUnitCase::Status::failed;
      c.message = fmt::format("{} value{} outside the criterion; the first: {}", bad.size(), bad.size() == 1 ? "" : "s",
                              bad.front());
      c.details = fmt::format("{}\n", fmt::join(bad, "\n"));
    }
    cases.push_back(std::move(c));
  }
  return junit_xml("compare", cases);
}

}  // namespace bnorm::cli

#include "transforms/upgrade/verify.h"

#include <algorithm>

#include "eval/report/compare_models.h"

namespace bnorm {

const char* const kVerifyInputsHint =
    "the input model itself does not run on these inputs: give real ones with --input NAME=FILE or --inputs DIR, "
    "or the values an input takes with --input-range NAME=LO:HI";

bool UpgradeVerification::pass() const {
  return std::all_of(compared.values.begin(), compared.values.end(), [](const TracedValue& v) { return v.diff.diff.pass; });
}

UpgradeVerification verify_upgrade(const Model& before, const Model& after, const VerifyInputs& inputs) {
  TraceOptions options;
  options.a_role = "while running the input model for --verify";
  options.b_role = "while running the converted model for --verify";
  options.a_hint = kVerifyInputsHint;
  UpgradeVerification v;
  v.compared = compare_models(before, after, verify_input_sets(before, inputs), options, before.path.string(),
                              "the converted model");
  for (const auto& t : v.compared.values) {
    if (!t.output) continue;
    UpgradeCheck c;
    c.output = t.name;
    c.type = dtype_name(t.dtype);
    c.shape = t.dims;
    c.max_abs = t.diff.diff.max_abs;
    c.max_rel = t.diff.diff.max_rel;
    c.pass = t.diff.diff.pass;
    c.problem = t.diff.diff.problem;
    v.outputs.push_back(std::move(c));
  }
  return v;
}

}  // namespace bnorm

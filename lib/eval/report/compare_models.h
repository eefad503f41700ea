// Two models run on the same input sets and B judged against A: the work
// of bnorm eval --compare, upgrade --verify and fold --verify's whole-model
// check.
//
// Outputs pair by name, else by position. With the auto criterion (or
// `every_value`: --trace) every value the models share is judged through a
// Tracer (trace.h), so an error that drowns in rounding by the outputs is
// still seen where it enters; else, the outputs only, element by element. Results
// aggregate over the sets. Errors of a model's run carry its file
// (a_name, b_name) and the options' role and hint.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/report/trace.h"
#include "model/model.h"
#include "model/tensor.h"

namespace bnorm {

TraceResult compare_models(const Model& a, const Model& b, const std::vector<std::map<std::string, Tensor>>& sets,
                           const TraceOptions& options, const std::string& a_name, const std::string& b_name,
                           bool every_value = false);

}  // namespace bnorm

// What runs sharing an EvalCache (evaluator.h) hand over to one another:
// the executor takes the main graph's weights and constant nodes' outputs
// from the cache as a run starts, and gives them back as it ends.
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

#include "eval/run/evaluator.h"
#include "eval/run/scope.h"

namespace bnorm::eval {

// As a run starts, `env` holding its given inputs and (lazy) initializers:
// the initializers the cache keeps (those no given input overrides), the
// ones the cache holds moved into `env` already decoded. The cache is then
// bound to `model` and `float64`; given another, Error(usage).
std::set<std::string> take_weights(EvalCache& cache, const Model& model, bool float64, Env& env);

// A constant node's outputs moved from the cache into `env`, when it holds
// them all (the node need not run); false otherwise.
bool take_outputs(EvalCache& cache, const onnx::NodeProto& n, Env& env);

// As the run ends: every value of `weights` and `constants` still in `env`
// (not left with the outputs) moved into the cache, which held nothing else.
void give_back(EvalCache& cache, Env& env, const std::set<std::string>& weights,
               const std::set<std::string>& constants);

}  // namespace bnorm::eval

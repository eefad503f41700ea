// The hand-over of cache.h.
#include "eval/run/cache.h"

#include "core/error.h"

namespace bnorm::eval {

std::set<std::string> take_weights(EvalCache& cache, const Model& model, bool float64, Env& env) {
  if (cache.model && (cache.model != &model || cache.float64 != float64)) {
    fail(ErrorKind::usage, "an evaluation cache belongs to one model and one float64 setting");
  }
  cache.model = &model;
  cache.float64 = float64;
  std::set<std::string> weights;
  for (const auto& [name, t] : env.lazy) weights.insert(name);
  for (auto it = cache.weights.begin(); it != cache.weights.end();) {
    if (env.lazy.erase(it->first)) {
      env.values[it->first] = Value::of(std::move(it->second));
      it = cache.weights.erase(it);
    } else {
      ++it;  // a constant node's output: taken when the node's turn comes
    }
  }
  return weights;
}

bool take_outputs(EvalCache& cache, const onnx::NodeProto& n, Env& env) {
  for (const auto& o : n.output()) {
    if (!o.empty() && !cache.weights.count(o)) return false;
  }
  for (const auto& o : n.output()) {
    if (o.empty()) continue;
    auto it = cache.weights.find(o);
    env.values[o] = Value::of(std::move(it->second));
    cache.weights.erase(it);
  }
  return true;
}

void give_back(EvalCache& cache, Env& env, const std::set<std::string>& weights,
               const std::set<std::string>& constants) {
  cache.weights.clear();
  for (const std::set<std::string>* names : {&weights, &constants}) {
    for (const auto& name : *names) {
      auto it = env.values.find(name);
      if (it != env.values.end() && it->second.is_tensor()) cache.weights[name] = std::move(it->second.tensor);
    }
  }
}

}  // namespace bnorm::eval

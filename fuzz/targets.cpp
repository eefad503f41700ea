#include "targets.h"

#include <nlohmann/json.hpp>

#include <map>
#include <stdexcept>

#include "core/error.h"
#include "core/log.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "model/graph_index.h"
#include "model/model.h"
#include "model/norm_op.h"
#include "model/tensor.h"
#include "model/tensor_file.h"
#include "model/tensor_proto.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/verify.h"
#include "transforms/inspect.h"
#include "transforms/json_text.h"
#include "transforms/upgrade/upgrade.h"

namespace bnorm::fuzz {

namespace {

// A model from bytes: protobuf parsing and load_model's checks. It has no
// file, so external data (relative to ".") is found in the fuzzer's working
// directory, which `make fuzz` keeps empty.
Model parse(const std::string& bytes) { return parse_model(bytes, "fuzz-input.onnx"); }

// (1) Model parsing and the graph index: every value of every scope looked
// up, its constant resolved and its declared type read; every initializer
// decoded; every normalization node read.
void model_body(const std::string& bytes) {
  const Model m = parse(bytes);
  const GraphIndex index(m.proto);
  const int64_t opset = default_opset(m.proto);
  for (const auto& scope : index.scopes()) {
    for (const auto& [name, value] : scope->values) {
      (void)index.find(*scope, name);
      (void)index.declared_type(*scope, name);
      try {
        (void)index.constant(*scope, name);
      } catch (const Error&) {
        // one bad constant does not hide the others
      }
    }
    for (const auto& node : scope->graph->node()) {
      (void)index.scope_of(&node);
      if (is_norm_node(node)) {
        try {
          (void)read_norm_node(node, opset);
        } catch (const Error&) {
        }
      }
    }
    for (const auto& t : scope->graph->initializer()) {
      try {
        (void)decode_tensor(t);
      } catch (const Error&) {
      }
    }
  }
}

// (2) The commands' pipelines on the parsed model.
void inspect_body(const std::string& bytes) {
  const Model m = parse(bytes);
  (void)json_text(to_json(inspect(m)));  // as `inspect --json` prints it
}

void upgrade_to(const Model& m, int64_t target) {
  Model copy = m;
  UpgradeOptions options;
  options.target = target;
  (void)upgrade_model(copy, options);
  check_model_full(copy.proto);
}

// Always to 15, and to one older opset picked by the input's size, so the
// fuzzer's mutations reach every direction.
void upgrade_body(const std::string& bytes) {
  const Model m = parse(bytes);
  static constexpr int64_t kOlder[] = {1, 6, 7, 9, 12, 14};
  try {
    upgrade_to(m, 15);
  } catch (const Error&) {
  }
  upgrade_to(m, kOlder[bytes.size() % std::size(kOlder)]);
}

// fold, then --verify's numeric check of every fold.
void fold_body(const std::string& bytes) {
  Model m = parse(bytes);
  const Model before = m;
  const FoldReport r = fold_batch_norms(m);
  (void)verify_folds(before, m, r, 0);
  std::string out;
  (void)m.proto.SerializeToString(&out);
}

// eval --random 0, every symbolic dim 2.
void eval_body(const std::string& bytes) {
  const Model m = parse(bytes);
  std::map<std::string, int64_t> dims;
  for (const auto& in : m.proto.graph().input()) {
    if (!in.type().has_tensor_type()) continue;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (d.has_dim_param()) dims[d.dim_param()] = 2;
    }
  }
  (void)evaluate(m, random_inputs(m, 0, dims));
}

// (3) Tensor files: .npy when the bytes start with its magic, else .pb (no
// directory, so external data is refused); then the values and the
// encoding back.
void tensor_body(const std::string& bytes) {
  const Tensor t = bytes.rfind("\x93NUMPY", 0) == 0 ? parse_npy(bytes) : parse_pb(bytes, {});
  (void)t.to_f64();
  (void)to_proto(t);
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"model", "models", model_body},   {"inspect", "models", inspect_body}, {"upgrade", "models", upgrade_body},
      {"fold", "models", fold_body},     {"eval", "models", eval_body},       {"tensor", "tensors", tensor_body},
  };
  return all;
}

const Target& target(const std::string& name) {
  for (const auto& t : targets()) {
    if (name == t.name) return t;
  }
  throw std::invalid_argument("no fuzz target named '" + name + "'");
}

bool run(const Target& t, const std::string& bytes) {
  // Warnings about odd models are expected by the thousand; restored after.
  struct Quiet {
    spdlog::level::level_enum was = log().level();
    Quiet() { log().set_level(spdlog::level::off); }
    ~Quiet() { log().set_level(was); }
  } quiet;
  const TensorByteLimit limit(kTensorByteLimit);
  try {
    t.body(bytes);
    return true;
  } catch (const Error&) {
    return false;  // an expected outcome: the input was refused with a message
  }
}

}  // namespace bnorm::fuzz

// The registry of op implementations: every family folder of eval/ops
// registers its rows (register.cpp there), each the closed range of
// since-versions one function implements (model/op_versions.h); a version
// between a row's bounds that changed only types is covered because the
// function reads types from its inputs, and one that changed meaning is
// handled inside the function by ctx.version. The ranges were audited
// against ONNX 1.23's Changelog (docs/semantics.md, "Op versions");
// op_table_test.cpp checks every row of every family.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/run/families.h"
#include "model/buffer_pool.h"
#include "model/op_versions.h"

namespace bnorm::eval {

namespace {

std::vector<OpImpl> build() {
  OpRegistry r;
  add_activation_ops(r);
  add_attention_ops(r);
  add_control_ops(r);
  add_elementwise_ops(r);
  add_experimental_ops(r);
  add_indexing_ops(r);
  add_loss_ops(r);
  add_math_ops(r);
  add_nn_conv_ops(r);
  add_nn_dropout_ops(r);
  add_nn_norm_ops(r);
  add_nn_pool_ops(r);
  add_quantization_ops(r);
  add_reduction_ops(r);
  add_resize_ops(r);
  add_rnn_ops(r);
  add_sequence_ops(r);
  add_spectral_ops(r);
  add_tensor_ops(r);
  add_text_ops(r);
  std::vector<OpImpl> rows = std::move(r.rows());
  std::sort(rows.begin(), rows.end(),
            [](const OpImpl& a, const OpImpl& b) { return a.op != b.op ? a.op < b.op : a.first < b.first; });
  return rows;
}

}  // namespace

void OpRegistry::add(const char* op, int first, int last, OpFn fn) { rows_.push_back({op, first, last, fn}); }

const std::vector<OpImpl>& op_impls() {
  static const std::vector<OpImpl> rows = build();
  return rows;
}

OpFn find_op(const std::string& op_type, int version) {
  for (const OpImpl& r : op_impls()) {
    if (r.op == op_type && version >= r.first && version <= r.last) return r.fn;
  }
  return nullptr;
}

bool implements_op(const std::string& op_type) {
  for (const OpImpl& r : op_impls()) {
    if (r.op == op_type) return true;
  }
  return false;
}

std::string implemented_versions(const std::string& op_type) {
  const OpHistory* h = op_history(op_type);
  if (!h) return {};
  std::vector<std::string> have;
  std::vector<std::string> all;
  for (int v : h->versions) {
    all.push_back(std::to_string(v));
    if (find_op(op_type, v)) have.push_back(all.back());
  }
  return fmt::format("implemented: {}; the op's versions: {}",
                     have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", ")), fmt::join(all, ", "));
}

const char* refusal_reason(const std::string& op_type) {
  struct Refusal {
    const char* op;
    const char* why;
  };
  static constexpr const char* kRandom = "its outputs are random, so there is nothing to check them against";
  static constexpr const char* kStrings = "bnorm eval does not hold string tensors";
  static constexpr Refusal kRefused[] = {
      {"Bernoulli", kRandom},
      {"Multinomial", kRandom},
      {"RandomNormal", kRandom},
      {"RandomNormalLike", kRandom},
      {"RandomUniform", kRandom},
      {"RandomUniformLike", kRandom},
      {"RegexFullMatch", kStrings},
      {"StringConcat", kStrings},
      {"StringNormalizer", kStrings},
      {"StringSplit", kStrings},
      {"ImageDecoder", "decoding images is left out of bnorm eval"},
      {"ATen", "it runs a PyTorch operator, which ONNX does not define"},
  };
  for (const Refusal& r : kRefused) {
    if (op_type == r.op) return r.why;
  }
  return nullptr;
}

const Tensor& OpContext::required(size_t i, const char* what) const {
  const Tensor* t = input(i);
  if (!t) fail(ErrorKind::input, "missing input '{}'", what);
  return *t;
}

bool OpContext::wants(int i) const { return i < node->output_size() && !node->output(i).empty(); }

Tensor* OpContext::reusable(size_t i, DType t, const std::vector<int64_t>& dims) const {
  Tensor* d = donated_input(i);
  return d && d->dtype == t && d->dims == dims ? d : nullptr;
}

const Tensor* OpContext::prepared(size_t i, const std::string& what, const std::function<Tensor()>& make) const {
  if (!prepared_store || i >= constant_inputs.size() || !constant_inputs[i] || !node) return nullptr;
  const std::string key = node->input(static_cast<int>(i)) + "\n" + what;
  auto it = prepared_store->find(key);
  if (it == prepared_store->end()) it = prepared_store->emplace(key, make()).first;
  return &it->second;
}

Tensor OpContext::input_or_copy(size_t i) const {
  if (Tensor* d = donated_input(i)) return std::move(*d);
  return pooled_copy(*inputs.at(i));
}

}  // namespace bnorm::eval

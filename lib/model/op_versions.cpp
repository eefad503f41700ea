#include "model/op_versions.h"

#include <algorithm>

#include <fmt/format.h>

namespace bnorm {

namespace {

const std::vector<OpHistory>& table() {
  static const std::vector<OpHistory> rows = {
#include "model/op_versions_table.inc"
  };
  return rows;
}

}  // namespace

int newest_known_opset() { return BNORM_NEWEST_OPSET; }

const std::vector<OpHistory>& all_op_histories() { return table(); }

const OpHistory* op_history(std::string_view op) {
  const auto& t = table();
  auto it = std::lower_bound(t.begin(), t.end(), op, [](const OpHistory& h, std::string_view o) { return h.op < o; });
  return it != t.end() && it->op == op ? &*it : nullptr;
}

ResolvedOp resolve_op(std::string_view op, int64_t opset) {
  ResolvedOp r;
  opset = std::max<int64_t>(opset, 1);
  const OpHistory* h = op_history(op);
  if (!h) {
    r.why_not = "no ONNX opset has it";
    return r;
  }
  r.known = true;
  if (h->experimental_until && opset >= h->experimental_until) {
    r.why_not = fmt::format("it was an experimental op of opsets 1 to {}", h->experimental_until - 1);
    return r;
  }
  int v = 0;
  for (int s : h->versions) {
    if (s <= opset) v = s;
  }
  if (!v) {
    r.why_not = fmt::format("it was introduced at opset {}", h->versions.front());
    return r;
  }
  // A deprecated version that is not the op's first removes the op (Upsample-10,
  // Scatter-11); a deprecated first version (GroupNormalization-18) is still the op.
  if (v == h->deprecated && v != h->versions.front()) {
    r.why_not = fmt::format("it was removed at opset {}", v);
    return r;
  }
  r.version = v;
  r.deprecated = v == h->deprecated;
  return r;
}

int op_version_at(std::string_view op, int64_t opset) { return resolve_op(op, opset).version; }

std::vector<int> versions_between(std::string_view op, int64_t from, int64_t to) {
  std::vector<int> out;
  const OpHistory* h = op_history(op);
  if (!h) return out;
  for (int s : h->versions) {
    if (s > from && s <= to) out.push_back(s);
  }
  return out;
}

}  // namespace bnorm

// TensorScatter-24 below opset 24: the cache around the update, by Slice
// and Concat when every sample writes at one known position, else each
// cache position reading the update element it receives.
//
//   Before: present = TensorScatter(past [.., M, ..], update [.., S, ..], write_indices?)  axis, mode
//   After, one known w (no wrap):
//           present = Concat(Slice(past, 0, w), update, Slice(past, w + S, M), axis)   (empty Slices left out)
//   After, per-sample or computed positions (write_indices W (B,)):
//           rel   = Sub(m, Reshape(W, [-1, 1, .., 1]))    m = [0 .. M-1] along `axis`
//           rel   = Mod(rel, M)                           circular mode
//           taken = And(Not(Less(rel, 0)), Less(rel, S))  (circular: Less(rel, S))
//           got   = GatherElements(update, Expand(Where(taken, rel, 0), Shape(past)), axis)
//           present = Where(taken, got, past)
//
// Formula: the Changelog's pseudocode: position m of sample b takes update
// element m - w[b] (circular: (m - w[b]) mod M) when that is in [0, S), and
// keeps the past otherwise. Pure data movement: exact for every type.
// Preconditions (each an Error naming the node): the rank of past_cache, M
// and S known; `axis` not 0; one known w: w >= 0 and w + S <= M (linear
// mode requires it; circular wraps by the second form); the second form:
// S <= M in circular mode (a longer update would write a position twice,
// the last write winning), GatherElements (opset 11) at the target.
#include <fmt/format.h>

#include <algorithm>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

namespace {

// The second form: every position of the cache reads the update element it receives.
void gather_form(NormSite& s, int64_t opset, int64_t rank, int64_t axis, int64_t max, int64_t seq) {
  const onnx::NodeProto n = s.node;
  require_op(s, "GatherElements", 11);
  const bool circular = attr_string(n, "mode", "linear") == "circular";
  if (circular && seq > max) {
    refuse(s, fmt::format("its update of {} positions is longer than the cache of {}: circular mode would write a "
                          "position twice", seq, max));
  }
  Lowering l{s, opset};
  std::vector<int64_t> pos_dims(static_cast<size_t>(rank), 1), w_dims(static_cast<size_t>(rank), 1);
  pos_dims[static_cast<size_t>(axis)] = max;
  w_dims[0] = -1;
  std::vector<double> m(static_cast<size_t>(max));
  for (int64_t i = 0; i < max; ++i) m[static_cast<size_t>(i)] = static_cast<double>(i);
  const std::string positions = l.constant(DType::int64, pos_dims, m, "positions");
  const std::string zero = l.scalar(DType::int64, 0, "zero");
  std::string rel = l.add("Sub", {positions, l.reshape(n.input(2), w_dims, "write_at")}, "relative");
  std::string taken;
  if (circular) {
    onnx::NodeProto& mod = s.add_before("Mod", {rel, l.scalar(DType::int64, double(max), "max")}, {l.value("wrapped")});
    rel = mod.output(0);
    taken = l.add("Less", {rel, l.scalar(DType::int64, double(seq), "seq")}, "taken");
  } else {
    const std::string from_start = l.add("Not", {l.add("Less", {rel, zero}, "before_start")}, "from_start");
    taken = l.add("And", {from_start, l.add("Less", {rel, l.scalar(DType::int64, double(seq), "seq")}, "before_end")},
                  "taken");
  }
  const std::string index = l.add("Where", {taken, rel, zero}, "index");
  const std::string full = l.add("Expand", {index, l.add("Shape", {n.input(0)}, "cache_shape")}, "index_full");
  onnx::NodeProto& gather = s.add_before("GatherElements", {n.input(1), full}, {l.value("received")});
  set_int(gather, "axis", axis);
  l.add("Where", {taken, gather.output(0), n.input(0)}, "present", n.output(0));
}

}  // namespace

void lower_tensorscatter_24(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  const std::string& past = n.input(0);
  const std::string& update = n.input(1);
  int64_t w = 0;
  bool one_position = true;  // every sample writes at w (no write_indices: 0)
  std::vector<int64_t> written;  // constant write_indices
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const auto c = s.env->index->constant(*s.scope, n.input(2));
    if (!c) {
      one_position = false;
    } else {
      const std::vector<int64_t> idx = constant_ints(s, 2, "write_indices", "be read");
      one_position = !idx.empty() && std::all_of(idx.begin(), idx.end(), [&](int64_t v) { return v == idx.front(); });
      if (one_position) w = idx.front();
      written = idx;
    }
  }
  const auto rank = s.rank_of(past);
  if (!rank) refuse(s, fmt::format("the rank of past_cache '{}' is not known", past));
  int64_t axis = attr_int(n, "axis", -2);
  if (axis < 0) axis += *rank;
  if (axis <= 0 || axis >= *rank) refuse(s, fmt::format("axis {} is not a sequence axis of a rank-{} cache", attr_int(n, "axis", -2), *rank));
  const auto pd = s.dims_of(past), ud = s.dims_of(update);
  const auto a = static_cast<size_t>(axis);
  if (!pd || !ud || pd->size() <= a || ud->size() <= a || (*pd)[a] < 0 || (*ud)[a] < 0) {
    refuse(s, "the sequence lengths of past_cache and update are not known");
  }
  const int64_t max = (*pd)[a], seq = (*ud)[a];
  const bool circular = attr_string(n, "mode", "linear") == "circular";
  if (one_position && (w < 0 || w + seq > max) && !(circular && w >= 0)) {
    refuse(s, fmt::format("it writes positions {} to {} of a cache of {}: outside the cache", w, w + seq - 1, max));
  }
  for (int64_t at : written) {  // known positions the spec does not allow
    if (at < 0 || (!circular && at + seq > max)) {
      refuse(s, fmt::format("it writes positions {} to {} of a cache of {}: outside the cache", at, at + seq - 1, max));
    }
  }
  if (!one_position || w + seq > max) {
    if (n.input_size() < 3 || n.input(2).empty()) refuse(s, "no write_indices and the update does not fit");
    gather_form(s, opset, *rank, axis, max, seq);
    return;
  }
  Lowering l{s, opset};
  auto slice = [&](int64_t from, int64_t to, const char* what) {
    const std::string o = l.value(what);
    s.add_before("Slice", {past, s.add_int64s(s.stem() + "_" + what + "_starts", {from}),
                           s.add_int64s(s.stem() + "_" + what + "_ends", {to}),
                           s.add_int64s(s.stem() + "_" + what + "_axes", {axis})},
                 {o});
    return o;
  };
  std::vector<std::string> parts;
  if (w > 0) parts.push_back(slice(0, w, "before"));
  parts.push_back(update);
  if (w + seq < max) parts.push_back(slice(w + seq, max, "after"));
  set_int(s.add_before("Concat", parts, {n.output(0)}), "axis", axis);
}

}  // namespace bnorm::steps

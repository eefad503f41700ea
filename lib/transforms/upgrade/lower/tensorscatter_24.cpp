// TensorScatter-24 below opset 24, when every sample writes at one known
// position: the cache around the update, by Slice and Concat.
//
//   Before: present = TensorScatter(past [.., max, ..], update [.., seq, ..], write_indices?)  axis, mode
//   After:  present = Concat(Slice(past, 0, w), update, Slice(past, w + seq, max), axis)
//           (an empty Slice is left out)
//
// Formula: the Changelog's pseudocode with write_indices[b] = w for every
// b: positions w .. w + seq - 1 along `axis` take the update, the others
// keep the past. Pure data movement: exact for every type.
// Preconditions (each an Error naming the node): write_indices absent
// (all 0) or a constant whose values are all one w >= 0; w + seq <= max
// (linear mode requires it; in circular mode nothing then wraps); the rank
// of past_cache, max and seq known; `axis` not 0. Otherwise refused, with
// why: per-sample positions would need ScatterND with computed indices.
#include <fmt/format.h>

#include <algorithm>

#include "model/attrs.h"
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_tensorscatter_24(NormSite& s, int64_t opset) {
  const onnx::NodeProto n = s.node;
  const std::string& past = n.input(0);
  const std::string& update = n.input(1);
  int64_t w = 0;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const std::vector<int64_t> idx = constant_ints(
        s, 2, "write_indices", "be written as Slice and Concat (per-sample positions would need ScatterND with computed indices)");
    if (idx.empty() || std::any_of(idx.begin(), idx.end(), [&](int64_t v) { return v != idx.front(); })) {
      refuse(s, "its write_indices differ between samples: per-sample positions would need ScatterND with computed "
                "indices, which bnorm does not write");
    }
    w = idx.front();
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
  if (w < 0 || w + seq > max) {
    refuse(s, fmt::format("it writes positions {} to {} of a cache of {}: outside the cache", w, w + seq - 1, max));
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

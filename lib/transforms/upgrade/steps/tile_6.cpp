// Tile across 6 (ONNX 1.12 has no adapter either way: "No Adapter From
// Version $6 for Tile").
//
//   Tile-1: Tile(input, tiles, axis)   repeat `tiles` times along `axis`
//                                      (scalars; ONNX's schema types them as
//                                      the float data, its text as int64)
//   Tile-6: Tile(input, repeats)       int64 [rank]: copies along each axis
//
//   Before (1):  Tile(X [2, 3], 3, 1)
//   After  (6+): Tile(X, [1, 3])
//
// Up: tiles and axis must be one-value constants and X's rank known (else
// Error naming the node); repeats = 1 on every axis but `axis`. Down:
// refused, naming the node: Tile-1's schema in ONNX 1.12 wants tiles and
// axis of the data's float type while its text and runtimes read integers,
// so no model written there passes both the checker and a runtime.
// Formula: unchanged.
#include <fmt/format.h>

#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void tile_6_convert(NormSite& s) {
  const int to = schema_version("Tile", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (s.version >= 6 && to < 6) {
    refuse(s, "Tile-1 (tiles and axis inputs) is not written: ONNX's schema types them as the data's float type, its "
              "text and runtimes as integers");
  }
  if (s.version < 6 && to >= 6) {
    int64_t v[2] = {0, 0};
    for (int i : {1, 2}) {
      const auto t = constant_input(s, i);
      if (!t || t->numel() != 1) {
        refuse(s, fmt::format("input '{}' ({}) must be a one-value constant to become part of `repeats`",
                              i < n.input_size() ? n.input(i) : "", i == 1 ? "tiles" : "axis"));
      }
      const auto value = t->to_i64();
      if (!value) refuse(s, fmt::format("input '{}' holds a value that is no integer", n.input(i)));
      v[i - 1] = (*value)[0];
    }
    const auto rank = s.rank_of(n.input(0));
    if (!rank) refuse(s, "the rank of the input is unknown; repeats needs one value per axis");
    const int64_t axis = v[1] < 0 ? v[1] + *rank : v[1];
    if (axis < 0 || axis >= *rank) refuse(s, fmt::format("axis {} is outside the input's rank {}", v[1], *rank));
    std::vector<int64_t> repeats(static_cast<size_t>(*rank), 1);
    repeats[static_cast<size_t>(axis)] = v[0];
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    n.add_input(s.add_int64s(s.stem() + "_repeats", repeats));
    s.report.set.push_back(fmt::format("repeats as input '{}'", n.input(1)));
  }
  s.version = to;
}

const Step tile_6{"tile_6", "tile_6", tile_6_convert, tile_6_convert};

}  // namespace bnorm::steps

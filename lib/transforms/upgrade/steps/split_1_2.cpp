// Split 1 -> 2 and above: Split-1 takes the part sizes as an optional second
// input or as the `split` attribute; from version 2 only the attribute
// (ONNX 1.12: "No Adapter From Version $1 for Split").
//
//   Before (1):  Split(X, sizes) axis      sizes a constant int64 1-D
//   After  (2+): Split(X) axis split = sizes
//
// Up: a constant second input becomes the attribute (an attribute already
// there wins, as Split-1 reads it; the input is then dropped); a non-constant
// one is refused, naming the node and the input. Down: nothing (the
// attribute is Split-1's too). Then the Split steps of 11 and 13 follow
// (transforms/upgrade/restore.cpp). Formula: unchanged.
#include <fmt/format.h>

#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void split_1_2_up(NormSite& s) {
  if (s.version >= 2 || schema_version("Split", s.target_opset) < 2) return;
  onnx::NodeProto& n = s.node;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    const std::vector<int64_t> sizes = constant_ints(s, 1, "split", "become an attribute from version 2");
    if (!find_attr(n, "split")) {
      set_ints(n, "split", sizes);
      s.report.set.push_back("split as an attribute");
    }
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  }
  s.version = 2;
}

}  // namespace bnorm::steps

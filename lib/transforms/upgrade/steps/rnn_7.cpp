// RNN, GRU, LSTM across 7 (and GRU across 3): ONNX 1.12 has no adapter
// either way ("No Adapter From Version $7 for LSTM").
//
//   Before (1, GRU-3):  LSTM(X, W, R) output_sequence = 1 -> Y, Y_h
//   After  (7+):        LSTM(X, W, R)                     -> Y, Y_h
//
//   RNN/LSTM-1, GRU-1/3: output_sequence (default 0) only says Y may be
//     left out; GRU-1 has no linear_before_reset (GRU-3 added it, default
//     0) and its Y_h is not optional.
//   7: output_sequence removed; every output optional.
//   14: layout added (default 0, the only layout before).
// Up across 7: output_sequence dropped. Across 3 and 14: nothing.
// Down across 14: layout must be 0 (dropped; 1 refused, naming the node).
// Down across 7: output_sequence = 1 when Y is produced. Down to GRU-1:
// linear_before_reset must be 0 (dropped; else refused), an absent Y_h gets
// a fresh unused name. Element types must exist at the target version.
// Formula: unchanged (the evaluator reads R transposed at every version,
// eval/ops/rnn/rnn.cpp).
#include <fmt/format.h>

#include "model/attrs.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

void rnn_convert(NormSite& s) {
  const std::string op = s.node.op_type();
  const int from = s.version, to = schema_version(op, s.target_opset);
  onnx::NodeProto& n = s.node;
  if (to < from) {
    refuse_missing_types(s, to);
    if (to < 14 && attr_int(n, "layout", 0) != 0) {
      refuse(s, "layout = 1 (batch first) has no form below version 14");
    }
    if (op == "GRU" && to < 3 && attr_int(n, "linear_before_reset", 0) != 0) {
      refuse(s, "linear_before_reset = 1 has no form in GRU-1 (it came with GRU-3)");
    }
    if (to < 14 && remove_attr(n, "layout")) s.report.dropped.push_back("layout = 0");
    if (op == "GRU" && to < 3 && remove_attr(n, "linear_before_reset")) s.report.dropped.push_back("linear_before_reset = 0");
    if (from >= 7 && to < 7 && n.output_size() > 0 && !n.output(0).empty()) {
      set_int(n, "output_sequence", 1);
      s.report.set.push_back("output_sequence = 1 (Y is produced)");
    }
    if (op == "GRU" && to < 3 && (n.output_size() < 2 || n.output(1).empty())) {
      while (n.output_size() < 2) n.add_output("");
      n.set_output(1, s.fresh(s.stem() + "_Y_h"));
      s.report.set.push_back(fmt::format("Y_h named '{}' (required in GRU-1)", n.output(1)));
    }
  } else if (from < 7 && to >= 7) {
    if (const auto* a = find_attr(n, "output_sequence")) s.report.dropped.push_back(fmt::format("output_sequence = {}", a->i()));
    remove_attr(n, "output_sequence");
  }
  s.version = to;
}

const Step rnn_7{"rnn_7", "rnn_7", rnn_convert, rnn_convert};

}  // namespace bnorm::steps

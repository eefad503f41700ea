// Rules of the recurrent ops: RNN, GRU, LSTM (layout from 14; Y, Y_h and
// LSTM's Y_c from hidden_size and the direction count), and
// RotaryEmbedding (its input's shape).
//
//   layout 0: X [seq, batch, input]  Y [seq, dirs, batch, hidden]  Y_h [dirs, batch, hidden]
//   layout 1: X [batch, seq, input]  Y [batch, seq, dirs, hidden]  Y_h [batch, dirs, hidden]
#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

void recurrent(NodeCtx& c) {
  const auto* x = c.shape(0);
  const bool layout1 = c.version >= 14 && attr_int(c.node, "layout", 0) != 0;
  const InferredDim dirs = InferredDim::of(attr_string(c.node, "direction", "forward") == "bidirectional" ? 2 : 1);
  const int64_t h = attr_int(c.node, "hidden_size", -1);
  const InferredDim hidden = h > 0 ? InferredDim::of(h) : InferredDim{};
  InferredDim seq, batch;
  if (x && x->size() == 3) {
    seq = (*x)[layout1 ? 1 : 0];
    batch = (*x)[layout1 ? 0 : 1];
  }
  const int32_t e = c.elem(0);
  if (layout1) c.set(0, e, std::vector<InferredDim>{batch, seq, dirs, hidden});
  else c.set(0, e, std::vector<InferredDim>{seq, dirs, batch, hidden});
  for (size_t o = 1; o < c.out.size(); ++o) {
    if (layout1) c.set(o, e, std::vector<InferredDim>{batch, dirs, hidden});
    else c.set(o, e, std::vector<InferredDim>{dirs, batch, hidden});
  }
}

}  // namespace

void add_rnn_rules(RuleTable& t) {
  t["RNN"] = t["GRU"] = t["LSTM"] = recurrent;
  t["RotaryEmbedding"] = [](NodeCtx& c) {
    c.set(0, c.elem(0), c.shape(0) ? std::optional(*c.shape(0)) : std::nullopt);
  };
}

}  // namespace bnorm::shape_infer

// Attention and RotaryEmbedding (opset 23): none registered yet.
#include "eval/ops.h"

namespace bnorm::eval {

void add_attention_ops(OpRegistry&) {}

}  // namespace bnorm::eval

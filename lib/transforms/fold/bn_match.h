// Fold match: may an inference BatchNormalization be folded into the node
// that produces its input? The pure half of the fold transform: it reads
// the model and answers with everything the rewrite needs, or with the
// reason it does not apply. "Does not apply" is not an error.
//
// Before:  X -> Conv|ConvTranspose|Gemm|MatMul(W, b) -> Y -> BN(s, B, m, v) -> Z
// After:   X -> same op(W', b') -> Z
// Formula (per output channel c; kernels/affine.h):
//   scale[c] = s[c] / sqrt(v[c] + eps),  shift[c] = B[c] - m[c] * scale[c]
//   W'[c, ...] = W[c, ...] * scale[c]      (the producer's output-channel axis)
//   b'[c]      = b[c] * scale[c] + shift[c]   (b = 0 when absent)
//
// Preconditions checked here (each failure is a reason):
//   - the BN is in inference mode and spatial (not the legacy spatial = 0);
//   - X is made by Conv, ConvTranspose, Gemm or MatMul in the same graph;
//   - X goes only to this BN and is not a graph output;
//   - the BN parameters and the producer's weights (and bias or C) are
//     constants: initializers, Constant nodes, or initializers listed as
//     graph inputs (IR < 4 style);
//   - the BN parameters have shape [C] (a scalar when C = 1), C being the
//     producer's output channels; MatMul's first input is known to be 2-D
//     and its weight is 2-D.
// Not a reason but an error (Error(input) naming the node): BN parameters
// whose element count is not the producer's channel count, as the model is
// then invalid (validate_model checks the other invariants at load).
// Gemm folds whatever transA is (BN scales the columns of Y, which transA
// does not touch) and whatever C's shape, as long as C broadcasts to [M, C].
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "model/graph_index.h"
#include "model/norm_op.h"

namespace bnorm {

enum class ProducerKind { conv, conv_transpose, gemm, matmul };

struct FoldMatch {
  const onnx::NodeProto* bn = nullptr;
  const onnx::NodeProto* producer = nullptr;
  const GraphIndex::Scope* scope = nullptr;
  ProducerKind kind = ProducerKind::conv;
  NormNode norm;
  int64_t channels = 0;
  int64_t group = 1;  // Conv / ConvTranspose
  GraphIndex::Constant weight;
  std::optional<GraphIndex::Constant> bias;  // Conv/ConvTranspose bias, Gemm C
  GraphIndex::Constant scale, B, mean, var;
};

struct FoldCandidate {
  std::optional<FoldMatch> match;
  std::string reason;  // why not, when !match
  explicit operator bool() const { return match.has_value(); }
};

// `shapes`, when given, indexes a copy of the same model with inferred
// shapes (same scopes, same paths): MatMul's input rank is looked up there.
FoldCandidate match_fold(const GraphIndex& index, const onnx::NodeProto& bn, int64_t opset,
                         const GraphIndex* shapes = nullptr);

std::string producer_name(ProducerKind k);

}  // namespace bnorm

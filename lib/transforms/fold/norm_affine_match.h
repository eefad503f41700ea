// Norm-family fold, the match half (norm_affine.h holds the contract): may
// this LayerNormalization, RMSNormalization or GroupNormalization's affine
// be folded into the node that reads its output? Reads the model only and
// answers with everything the rewrite needs, or with the reason it does not
// apply ("does not apply" is not an error).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "model/graph_index.h"
#include "model/model.h"

namespace bnorm {

enum class NormConsumer { gemm, matmul, conv };

struct NormFoldMatch {
  const onnx::NodeProto* norm = nullptr;
  const GraphIndex::Scope* scope = nullptr;
  int version = 0;
  const onnx::NodeProto* consumer = nullptr;
  NormConsumer kind = NormConsumer::gemm;
  const onnx::NodeProto* add = nullptr;  // MatMul's only reader, when the bias goes into its constant
  int add_input = -1;                    // which input of `add` is that constant
  GraphIndex::Constant scale, weight;
  std::optional<GraphIndex::Constant> bias;  // the norm's bias (absent: RMSNormalization, LN without B)
  std::optional<GraphIndex::Constant> c;     // Gemm C, Conv B or the Add's constant
  // W[k, j] at k * k_stride + j * j_stride (norm_affine_math.h).
  int64_t K = 0, N = 0, k_stride = 0, j_stride = 0;
  // GroupNormalization-18: scale/bias per group, each covering this many
  // channels (1 otherwise).
  int64_t per_group = 1;
  bool bias_nonzero = false;
};

struct NormFoldCandidate {
  std::optional<NormFoldMatch> match;
  std::string reason;
  explicit operator bool() const { return match.has_value(); }
};

// LayerNormalization, RMSNormalization or GroupNormalization in the default domain.
bool is_affine_norm(const onnx::NodeProto& n);

// `shapes`, when given, indexes a copy of the model with inferred shapes
// (same scopes): the rank of X is looked up there when axis is not -1.
NormFoldCandidate match_norm_fold(const Model& model, const GraphIndex& index, const onnx::NodeProto& norm,
                                  int64_t opset, const GraphIndex* shapes);

std::string consumer_name(NormConsumer k);

}  // namespace bnorm

// Internal to fold: one planned fold, computed while reading the model,
// applied by apply_fold_plans() once all reading is done (fold_apply.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "model/model.h"
#include "model/tensor.h"
#include "transforms/fold_match.h"

namespace bnorm {

struct FoldPlan {
  std::string graph_path;
  onnx::GraphProto* graph = nullptr;       // the graph holding BN and producer
  int bn_index = -1, producer_index = -1;  // positions in that graph
  ProducerKind kind = ProducerKind::conv;
  std::string bn_name, bn_output, producer_name, producer_output;
  Tensor weight, bias;                     // the folded values
  std::string weight_name, bias_name;      // existing names (in place) or fresh ones
  bool weight_in_place = false, bias_in_place = false;
  bool set_beta_one = false;               // Gemm with beta = 0: C' replaces a C that never counted
  std::vector<std::string> released;       // names the folded nodes stop using
};

// Rewrites the model: producers take the new tensors and the BN's output
// name, BN nodes go, tensors nobody uses any more go.
void apply_fold_plans(Model& model, std::vector<FoldPlan>& plans, int64_t opset);

}  // namespace bnorm

// Internal to fold: one planned fold, computed while reading the model,
// applied by apply_fold_plans() once all reading is done (bn_apply.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/tensor.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/bn_match.h"

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
  std::string warning;                     // input_var NaN or var + epsilon <= 0 (empty: none)
};

// What the folds leave to do once all of them are written: BN nodes to
// delete (by position in their graph) and names they stopped using.
struct FoldFinish {
  std::map<onnx::GraphProto*, std::vector<int>> bn_positions;
  std::set<std::string> released;
  std::set<std::string> stale;  // producer outputs renamed: their value_info goes
};

// Writes one fold: the producer takes the new tensors (the weight unless
// `weight_written`, already scaled in place) and the BN's output name.
// Nodes and tensors are not removed here (pointers into the model must
// stay valid until every fold is written): that is finish_folds().
void apply_fold(Model& model, FoldPlan& plan, int64_t opset, bool weight_written, FoldFinish& finish);
// Writes `t` over the initializer `name` of `g` (in_place), or adds it as a
// new initializer (also a graph input when list_as_input: IR < 4).
void put_tensor(onnx::GraphProto& g, const Tensor& t, const std::string& name, bool in_place, bool list_as_input);
// Deletes the folded BN nodes and what nobody uses any more.
void finish_folds(Model& model, FoldFinish& finish);
// Sets the report's size estimates and adds one warning per entry of
// report.generated (generated.h); `model_bytes`: the size before folding.

void add_generated_warnings(FoldReport& report, uint64_t model_bytes);

}  // namespace bnorm

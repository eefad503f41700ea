// Folding inference normalization into the neighbouring Conv,
// ConvTranspose, Gemm or MatMul: `bnorm fold` (docs/cli.md), in place.
#pragma once

#include <bnorm/model.h>
#include <bnorm/report.h>
#include <bnorm/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace bnorm::api {

struct FoldRequest {
  // Prove each fold on seeded random inputs (the report's "verify"), then,
  // where bnorm eval runs the whole model, judge every value the input and
  // the folded model compute as eval --compare does ("verify_model").
  bool verify = false;
  uint64_t seed = 0;            // of verify's inputs
  // The values of verify's random inputs (each fold's X, or a graph input
  // of the whole-model check) by name (--input-range).
  std::map<std::string, InputRange> ranges;
  // The whole-model check's inputs: given ones (--input; the others random)
  // or input sets (--inputs DIR), and symbolic dims (--dim).
  std::map<std::string, Tensor> inputs;
  std::vector<std::map<std::string, Tensor>> input_sets;
  std::map<std::string, int64_t> dims;
  bool all_norms = false;       // also the affine of LayerNormalization, RMSNormalization, GroupNormalization
  bool keep_generated = false;  // leave unfolded a node whose weights ConstantOfShape generates
  // What the report's "input" and "output" say (null when not given).
  std::optional<std::string> input, output;
};

// Folds `model` in place and returns the bnorm.fold/1 report ("written" is
// false: saving is the caller's). exit_code 1 when verify found a fold off
// (the model is folded all the same; the CLI then writes nothing).
Report fold(Model& model, const FoldRequest& request = {});

}  // namespace bnorm::api

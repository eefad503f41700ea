// Seeded random inputs for a model: every graph input that is neither an
// initializer nor already given gets data of its declared type and shape.
// Floating types draw uniformly from [-1, 1) (rounded once to the type),
// integers from {0, 1, 2, 3}, bool from {0, 1}, except:
//  - an input `ranges` names draws from its range (InputRange, bnorm/tensor.h);
//  - an integer input a main-graph node gives valid values (indices, sizes,
//    shapes: input_rules.h) draws from those, Error(usage) when they cannot
//    be known (asking for --input or --input-range).
// Those two take their values from a stream of their own (the seed and the
// input's name) and skip their share of the common one, so every other input
// draws what it always drew. A `ranges` key that is no input drawn here is
// Error(usage) listing those. Symbolic dims take their
// value from `dims` (NAME -> VALUE; a dim with no name, declared -1 or
// empty, is INPUT[i]). Error(usage): every symbolic dim without a value,
// listed at once; a `dims` key that is no symbolic dim of the model's
// inputs (listing those); an input without a declared shape.
// The same seed gives the same data on every machine (mt19937_64).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/tensor.h"

namespace bnorm {

using InputRanges = std::map<std::string, InputRange>;

std::map<std::string, Tensor> random_inputs(const Model& model, uint64_t seed,
                                            const std::map<std::string, int64_t>& dims,
                                            const std::map<std::string, Tensor>& given = {},
                                            const InputRanges& ranges = {});

// The inputs a run takes: `given`, and with a seed random data for every
// other input (random_inputs). Without a seed every input must be given:
// Error(usage) naming every one missing (and `dims` and `ranges` must be
// empty: they shape random inputs only).
std::map<std::string, Tensor> complete_inputs(const Model& model, const std::map<std::string, Tensor>& given,
                                              const std::optional<uint64_t>& seed,
                                              const std::map<std::string, int64_t>& dims,
                                              const InputRanges& ranges = {});

// The inputs a --verify runs both models on: `sets` when given (each must
// give every input), else one set of `given` and random data for the rest.
struct VerifyInputs {
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;
  InputRanges ranges;
  std::map<std::string, Tensor> given;
  std::vector<std::map<std::string, Tensor>> sets;
};
std::vector<std::map<std::string, Tensor>> verify_input_sets(const Model& model, const VerifyInputs& in);

}  // namespace bnorm

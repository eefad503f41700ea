// Model inputs from the command line, shared by the commands that run a
// model: --input NAME=FILE (.pb or .npy), --random SEED for the rest, and
// --dim NAME=VALUE (or INPUT[i]=VALUE) for their symbolic dims, and
// --input-range NAME=LO:HI for the values of one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/tensor.h"

namespace bnorm::cli {

struct InputOptions {
  std::vector<std::string> inputs, dims, ranges;
  std::optional<uint64_t> seed;
};

// "NAME=VALUE" split at the first '=', else Error(usage) naming `option`.
std::pair<std::string, std::string> split_assignment(const std::string& s, const char* option);

// --dim NAME=VALUE options as a map (Error(usage) for a bad one).
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs);
// --input-range NAME=LO:HI options as a map (Error(usage) for a bad one:
// not two numbers, LO > HI, a name twice).
std::map<std::string, InputRange> parse_ranges(const std::vector<std::string>& specs);
// --input NAME=FILE options, read (.pb or .npy; "-" is stdin).
std::map<std::string, Tensor> read_inputs(const std::vector<std::string>& specs);

// The given inputs, and with a seed random data for every other input
// (every symbolic dim without a size, and unknown --dim names, reported at
// once). Without a seed, every input must be given (all missing ones named).
std::map<std::string, Tensor> model_inputs(const InputOptions& o, const Model& model);

}  // namespace bnorm::cli

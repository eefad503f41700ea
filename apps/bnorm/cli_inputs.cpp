#include "cli_inputs.h"

#include <fmt/format.h>

#include <set>

#include "core/error.h"
#include "eval/run/random_inputs.h"
#include "model/tensor_file.h"

namespace bnorm::cli {

std::pair<std::string, std::string> split_assignment(const std::string& s, const char* option) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw Error(ErrorKind::usage, fmt::format("{} expects NAME=VALUE, got '{}'", option, s));
  }
  return {s.substr(0, eq), s.substr(eq + 1)};
}

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const auto& s : specs) {
    const auto [name, value] = split_assignment(s, "--dim");
    try {
      size_t used = 0;
      dims[name] = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      throw Error(ErrorKind::usage, fmt::format("--dim {}: '{}' is not an integer", name, value));
    }
    if (dims[name] < 0) throw Error(ErrorKind::usage, fmt::format("--dim {}: must not be negative", name));
  }
  return dims;
}

std::map<std::string, Tensor> read_inputs(const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> given;
  for (const auto& s : specs) {
    const auto [name, file] = split_assignment(s, "--input");
    Tensor t = read_tensor_file(file);
    t.name = name;
    given[name] = std::move(t);
  }
  return given;
}

std::map<std::string, Tensor> model_inputs(const InputOptions& o, const Model& model) {
  return complete_inputs(model, read_inputs(o.inputs), o.seed, parse_dims(o.dims));
}

}  // namespace bnorm::cli

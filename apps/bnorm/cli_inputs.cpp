#include "cli_inputs.h"

#include <fmt/format.h>

#include <cmath>
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

std::map<std::string, InputRange> parse_ranges(const std::vector<std::string>& specs) {
  std::map<std::string, InputRange> ranges;
  for (const auto& s : specs) {
    const auto [name, value] = split_assignment(s, "--input-range");
    const auto colon = value.find(':', 1);
    double bounds[2] = {0, 0};
    bool ok = colon != std::string::npos;
    for (int i = 0; ok && i < 2; ++i) {
      const std::string text = i == 0 ? value.substr(0, colon) : value.substr(colon + 1);
      try {
        size_t used = 0;
        bounds[i] = std::stod(text, &used);
        ok = used == text.size() && std::isfinite(bounds[i]);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok) throw Error(ErrorKind::usage, fmt::format("--input-range {}: '{}' is not LO:HI (two numbers)", name, value));
    if (bounds[0] > bounds[1]) {
      throw Error(ErrorKind::usage, fmt::format("--input-range {}: LO {:g} is above HI {:g}", name, bounds[0], bounds[1]));
    }
    if (!ranges.emplace(name, InputRange{bounds[0], bounds[1]}).second) {
      throw Error(ErrorKind::usage, fmt::format("--input-range {}: given twice", name));
    }
  }
  return ranges;
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
  return complete_inputs(model, read_inputs(o.inputs), o.seed, parse_dims(o.dims), parse_ranges(o.ranges));
}

}  // namespace bnorm::cli

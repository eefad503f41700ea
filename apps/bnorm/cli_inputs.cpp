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

std::map<std::string, Tensor> model_inputs(const InputOptions& o, const Model& model) {
  std::map<std::string, Tensor> given;
  for (const auto& s : o.inputs) {
    const auto [name, file] = split_assignment(s, "--input");
    Tensor t = read_tensor_file(file);
    t.name = name;
    given[name] = std::move(t);
  }
  if (!o.seed) {
    if (!o.dims.empty()) throw Error(ErrorKind::usage, "--dim sizes the inputs --random makes: give --random SEED too");
    std::set<std::string> initializers;
    for (const auto& t : model.proto.graph().initializer()) initializers.insert(t.name());
    std::vector<std::string> missing;
    for (const auto& in : model.proto.graph().input()) {
      if (!initializers.count(in.name()) && !given.count(in.name())) missing.push_back("'" + in.name() + "'");
    }
    if (!missing.empty()) {
      throw Error(ErrorKind::usage,
                  fmt::format("no data for input{} {}", missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")),
                  "give each with --input NAME=FILE (.pb or .npy), or fill them with --random SEED");
    }
    return given;
  }
  std::map<std::string, int64_t> dims;
  for (const auto& s : o.dims) {
    const auto [name, value] = split_assignment(s, "--dim");
    try {
      dims[name] = std::stoll(value);
    } catch (const std::exception&) {
      throw Error(ErrorKind::usage, fmt::format("--dim {}: '{}' is not an integer", name, value));
    }
    if (dims[name] < 0) throw Error(ErrorKind::usage, fmt::format("--dim {}: must not be negative", name));
  }
  return random_inputs(model, *o.seed, dims, given);
}

}  // namespace bnorm::cli

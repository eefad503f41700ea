#include "eval/run/random_inputs.h"

#include <cmath>
#include <random>
#include <set>

#include "core/error.h"

namespace bnorm {

namespace {

// The key --dim gives a dim by: its name, or INPUT[i] for a dim with no name
// (declared -1 or left empty).
std::string dim_key(const onnx::ValueInfoProto& in, int i, const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : fmt::format("{}[{}]", in.name(), i);
}

}  // namespace

std::map<std::string, Tensor> random_inputs(const Model& model, uint64_t seed,
                                            const std::map<std::string, int64_t>& dims,
                                            const std::map<std::string, Tensor>& given) {
  std::map<std::string, Tensor> out = given;
  std::set<std::string> initializers;
  for (const auto& t : model.proto.graph().initializer()) initializers.insert(t.name());
  // Every dim --dim may name, and every one still missing: all reported at once.
  std::set<std::string> known;
  std::vector<std::string> missing;
  for (const auto& in : model.proto.graph().input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const auto& shape = in.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      if (d.has_dim_value()) continue;
      const std::string key = dim_key(in, i, d);
      known.insert(key);
      const bool needed = !initializers.count(in.name()) && !out.count(in.name());
      if (needed && !dims.count(key)) missing.push_back(fmt::format("'{}' (input '{}', dim {})", key, in.name(), i));
    }
  }
  for (const auto& [name, value] : dims) {
    if (known.count(name)) continue;
    const std::string list = known.empty() ? std::string("it has none")
                                           : fmt::format("its symbolic dims are {}", fmt::join(known, ", "));
    throw Error(ErrorKind::usage, fmt::format("--dim {}: the model has no symbolic dim '{}'; {}", name, name, list));
  }
  if (!missing.empty()) {
    throw Error(ErrorKind::usage,
                fmt::format("{} symbolic dim{} need{} a size: {}", missing.size(), missing.size() == 1 ? "" : "s",
                            missing.size() == 1 ? "s" : "", fmt::join(missing, ", ")),
                "give each with --dim NAME=VALUE (a dim without a name: --dim INPUT[i]=VALUE)");
  }
  std::mt19937_64 rng(seed);
  for (const auto& in : model.proto.graph().input()) {
    if (initializers.count(in.name()) || out.count(in.name())) continue;
    const auto& type = in.type();
    if (!type.has_tensor_type()) {
      const char* kind = type.has_sequence_type() ? "a sequence" : type.has_optional_type() ? "an optional"
                         : type.has_map_type()    ? "a map"      : "not a tensor";
      throw Error(ErrorKind::unsupported,
                  fmt::format("input '{}' is {}: random inputs are tensors only", in.name(), kind),
                  "give it with --input NAME=FILE (a SequenceProto or OptionalProto .pb), or check the model with "
                  "its test data: bnorm eval DIR");
    }
    if (!type.tensor_type().has_shape()) {
      throw Error(ErrorKind::usage, fmt::format("input '{}' has no declared tensor shape", in.name()),
                  "give it with --input NAME=FILE");
    }
    std::vector<int64_t> shape;
    const auto& declared = type.tensor_type().shape();
    for (int i = 0; i < declared.dim_size(); ++i) {
      const auto& d = declared.dim(i);
      shape.push_back(d.has_dim_value() ? d.dim_value() : dims.at(dim_key(in, i, d)));
    }
    const auto dtype = static_cast<DType>(type.tensor_type().elem_type());
    const auto size = static_cast<int64_t>(dtype_size(dtype));
    if (size == 0) {
      throw Error(ErrorKind::unsupported, fmt::format("input '{}' has type {}, which bnorm cannot generate", in.name(),
                                                      dtype_name(dtype)));
    }
    int64_t n = 0;
    try {
      n = checked_numel(shape, max_tensor_bytes() / size);  // the tensor byte limit, before any allocation
    } catch (const Error& e) {
      throw Error(ErrorKind::input, fmt::format("input '{}': {}", in.name(), e.bare_message()),
                  "give it with --input NAME=FILE, or smaller dims with --dim");
    }
    std::vector<double> v(static_cast<size_t>(n));
    if (is_floating(dtype)) {
      // 53 random bits -> [0, 1) -> [-1, 1): the same on every platform.
      for (auto& x : v) x = std::ldexp(static_cast<double>(rng() >> 11), -52) - 1.0;
    } else if (dtype == DType::boolean) {
      for (auto& x : v) x = static_cast<double>(rng() & 1u);
    } else {
      for (auto& x : v) x = static_cast<double>(rng() % 4u);
    }
    out[in.name()] = Tensor::from_f64(dtype, shape, v, in.name());
  }
  return out;
}

std::map<std::string, Tensor> complete_inputs(const Model& model, const std::map<std::string, Tensor>& given,
                                              const std::optional<uint64_t>& seed,
                                              const std::map<std::string, int64_t>& dims) {
  if (seed) return random_inputs(model, *seed, dims, given);
  if (!dims.empty()) throw Error(ErrorKind::usage, "--dim sizes the inputs --random makes: give --random SEED too");
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

}  // namespace bnorm

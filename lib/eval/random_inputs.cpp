#include "eval/random_inputs.h"

#include <cmath>
#include <random>
#include <set>

#include "core/error.h"

namespace bnorm {

std::map<std::string, Tensor> random_inputs(const Model& model, uint64_t seed,
                                            const std::map<std::string, int64_t>& dims,
                                            const std::map<std::string, Tensor>& given) {
  std::map<std::string, Tensor> out = given;
  std::set<std::string> initializers;
  for (const auto& t : model.proto.graph().initializer()) initializers.insert(t.name());
  std::mt19937_64 rng(seed);
  for (const auto& in : model.proto.graph().input()) {
    if (initializers.count(in.name()) || out.count(in.name())) continue;
    const auto& type = in.type();
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) {
      throw Error(ErrorKind::usage, fmt::format("input '{}' has no declared tensor shape", in.name()),
                  "give it with --input NAME=FILE");
    }
    std::vector<int64_t> shape;
    for (const auto& d : type.tensor_type().shape().dim()) {
      if (d.has_dim_value()) {
        shape.push_back(d.dim_value());
        continue;
      }
      auto it = d.has_dim_param() ? dims.find(d.dim_param()) : dims.end();
      if (it == dims.end()) {
        throw Error(ErrorKind::usage,
                    fmt::format("input '{}' has a symbolic dim '{}'", in.name(), d.has_dim_param() ? d.dim_param() : "?"),
                    fmt::format("give its size with --dim {}=VALUE", d.has_dim_param() ? d.dim_param() : "NAME"));
      }
      shape.push_back(it->second);
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

}  // namespace bnorm

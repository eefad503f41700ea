#include "eval/run/random_inputs.h"

#include <cmath>
#include <random>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "eval/run/input_rules.h"

namespace bnorm {

namespace {

// The key --dim gives a dim by: its name, or INPUT[i] for a dim with no name
// (declared -1 or left empty).
std::string dim_key(const onnx::ValueInfoProto& in, int i, const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : fmt::format("{}[{}]", in.name(), i);
}

// One input to draw: its type and shape.
struct Planned {
  const onnx::ValueInfoProto* in;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t n;
};

// The values an integer or bool type holds (int64 and uint64 within 2^53,
// where a double is exact); nullopt for the others.
std::optional<IndexRange> integer_limits(DType t) {
  constexpr int64_t exact = int64_t{1} << 53;
  switch (t) {
    case DType::boolean: return IndexRange{0, 1};
    case DType::int4: return IndexRange{-8, 7};
    case DType::uint4: return IndexRange{0, 15};
    case DType::int2: return IndexRange{-2, 1};
    case DType::uint2: return IndexRange{0, 3};
    case DType::int8: return IndexRange{-128, 127};
    case DType::uint8: return IndexRange{0, 255};
    case DType::int16: return IndexRange{-32768, 32767};
    case DType::uint16: return IndexRange{0, 65535};
    case DType::int32: return IndexRange{INT32_MIN, INT32_MAX};
    case DType::uint32: return IndexRange{0, UINT32_MAX};
    case DType::int64: return IndexRange{-exact, exact};
    case DType::uint64: return IndexRange{0, exact};
    default: return std::nullopt;
  }
}

// The stream an input drawn by a rule or a range takes its values from: the
// seed and the input's name (FNV-1a), the same on every machine.
std::mt19937_64 own_stream(uint64_t seed, const std::string& name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return std::mt19937_64(seed ^ (h * 0x9E3779B97F4A7C15ull));
}

// An integer in [lo, hi], both included.
int64_t draw_int(std::mt19937_64& rng, IndexRange r) {
  const uint64_t span = static_cast<uint64_t>(r.hi) - static_cast<uint64_t>(r.lo) + 1;
  return static_cast<int64_t>(static_cast<uint64_t>(r.lo) + rng() % span);
}

// `count` distinct numbers of [0, space) (Fisher-Yates on a sparse array).
std::vector<uint64_t> distinct_positions(std::mt19937_64& rng, uint64_t count, uint64_t space) {
  std::unordered_map<uint64_t, uint64_t> moved;
  const auto at = [&](uint64_t i) { const auto it = moved.find(i); return it == moved.end() ? i : it->second; };
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t j = i + rng() % (space - i);
    const uint64_t vi = at(i);
    out.push_back(at(j));
    moved[j] = vi;
  }
  return out;
}

// Draws `r` (ranges already within the type) into v: positions without
// duplicates on each group where they fit, else (and without `distinct`)
// each element on its own.
void draw_rule(std::mt19937_64& rng, const InputRule& r, const std::vector<IndexRange>& ranges,
               const std::vector<int64_t>& shape, std::vector<double>& v) {
  const size_t k = ranges.size();
  std::vector<char> done(v.size(), 0);
  if (r.distinct && !v.empty()) {
    // Groups: each line along the axis (tuples of one), or all tuples of the last axis.
    const size_t t = r.axis >= 0 ? 1 : k;
    int64_t step = static_cast<int64_t>(t), count = static_cast<int64_t>(v.size() / t);
    if (r.axis >= 0) {
      step = 1;
      for (size_t d = static_cast<size_t>(r.axis) + 1; d < shape.size(); ++d) step *= shape[d];
      count = shape[static_cast<size_t>(r.axis)];
    }
    std::vector<uint64_t> sizes;  // positions p < size whose p (or p - s) the range holds
    uint64_t space = 1;
    for (size_t j = 0; j < t; ++j) {
      const IndexRange& q = ranges[r.axis >= 0 ? 0 : j];
      sizes.push_back(static_cast<uint64_t>(std::max<int64_t>(0, std::min(r.sizes[j], q.hi + 1))));
      space = sizes.back() && space > UINT64_MAX / sizes.back() ? UINT64_MAX : space * sizes.back();
    }
    for (size_t base = 0; base < v.size() && static_cast<uint64_t>(count) <= space; ++base) {
      if (r.axis >= 0 && (base / static_cast<size_t>(step)) % static_cast<size_t>(count) != 0) continue;
      if (r.axis < 0 && base > 0) break;
      const auto positions = distinct_positions(rng, static_cast<uint64_t>(count), space);
      for (int64_t c = 0; c < count; ++c) {
        uint64_t p = positions[static_cast<size_t>(c)];
        for (size_t j = t; j-- > 0;) {
          const auto pj = static_cast<int64_t>(p % sizes[j]);
          p /= sizes[j];
          const bool back = r.negative && pj - r.sizes[j] >= ranges[r.axis >= 0 ? 0 : j].lo && (rng() & 1u);
          const size_t at = base + static_cast<size_t>(c * step) + j;
          v[at] = static_cast<double>(back ? pj - r.sizes[j] : pj);
          done[at] = 1;
        }
      }
    }
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (!done[i]) v[i] = static_cast<double>(draw_int(rng, ranges[i % k]));
  }
}

// The rule's ranges within `dtype`'s; Error(usage) when one is empty and
// there is something to draw.
std::vector<IndexRange> within_type(const std::string& name, DType dtype, const InputRule& r, int64_t n) {
  const IndexRange limits = *integer_limits(dtype);
  std::vector<IndexRange> out;
  for (const auto& q : r.along_last) {
    out.push_back({std::max(q.lo, limits.lo), std::min(q.hi, limits.hi)});
    if (n > 0 && out.back().lo > out.back().hi) {
      throw Error(ErrorKind::usage,
                  fmt::format("random input '{}' ({}) is {}: no {} value is valid there", name, dtype_name(dtype), r.why,
                              dtype_name(dtype)),
                  fmt::format("give it with --input {}=FILE", name));
    }
  }
  return out;
}

// --input-range NAME=LO:HI for an input of `dtype`: whole numbers the type
// holds for integers and bool (Error(usage) otherwise).
void draw_range(std::mt19937_64& rng, const std::string& name, DType dtype, InputRange range, std::vector<double>& v) {
  const auto limits = integer_limits(dtype);
  if (!limits) {
    for (auto& x : v) x = range.lo + (range.hi - range.lo) * std::ldexp(static_cast<double>(rng() >> 11), -53);
    return;
  }
  for (double b : {range.lo, range.hi}) {
    if (b != std::floor(b) || b < static_cast<double>(limits->lo) || b > static_cast<double>(limits->hi)) {
      throw Error(ErrorKind::usage,
                  fmt::format("--input-range {}={:g}:{:g}: input '{}' is {}, whose values are the whole numbers in [{}, {}]",
                              name, range.lo, range.hi, name, dtype_name(dtype), limits->lo, limits->hi));
    }
  }
  const IndexRange r{static_cast<int64_t>(range.lo), static_cast<int64_t>(range.hi)};
  for (auto& x : v) x = static_cast<double>(draw_int(rng, r));
}

}  // namespace

std::map<std::string, Tensor> random_inputs(const Model& model, uint64_t seed,
                                            const std::map<std::string, int64_t>& dims,
                                            const std::map<std::string, Tensor>& given, const InputRanges& ranges) {
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
  // --input-range names inputs random data is made for.
  std::vector<std::string> made;
  for (const auto& in : model.proto.graph().input()) {
    if (!initializers.count(in.name()) && !out.count(in.name())) made.push_back(in.name());
  }
  for (const auto& [name, range] : ranges) {
    if (std::count(made.begin(), made.end(), name)) continue;
    const std::string list = made.empty() ? std::string("none")
                                          : fmt::format("'{}'", fmt::join(made, "', '"));
    throw Error(ErrorKind::usage,
                fmt::format("--input-range {}: '{}' is no input random data is made for{}; those are: {}", name, name,
                            out.count(name) ? " (it is given)" : initializers.count(name) ? " (it is an initializer)" : "",
                            list));
  }
  std::vector<Planned> planned;
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
    planned.push_back({&in, dtype, shape, n});
  }
  // The rules of the inputs no --input-range sets (input_rules.h).
  std::map<std::string, std::vector<int64_t>> drawn, shapes;
  for (const auto& [name, t] : given) shapes[name] = t.dims;
  for (const auto& p : planned) {
    shapes[p.in->name()] = p.shape;
    if (!ranges.count(p.in->name())) drawn[p.in->name()] = p.shape;
  }
  const auto rules = input_rules(model, drawn, shapes, given);
  // One stream for the inputs no rule or range covers, as it always was;
  // the others skip their share of it and draw from their own.
  std::mt19937_64 rng(seed);
  for (const auto& p : planned) {
    const std::string& name = p.in->name();
    std::vector<double> v(static_cast<size_t>(p.n));
    const auto range = ranges.find(name);
    const auto rule = rules.find(name);
    if (range != ranges.end() || rule != rules.end()) {
      rng.discard(static_cast<unsigned long long>(p.n));
      std::mt19937_64 own = own_stream(seed, name);
      if (range != ranges.end()) draw_range(own, name, p.dtype, range->second, v);
      else draw_rule(own, rule->second, within_type(name, p.dtype, rule->second, p.n), p.shape, v);
    } else if (is_floating(p.dtype)) {
      // 53 random bits -> [0, 1) -> [-1, 1): the same on every platform.
      for (auto& x : v) x = std::ldexp(static_cast<double>(rng() >> 11), -52) - 1.0;
    } else if (p.dtype == DType::float8e8m0) {
      // Powers of two 2^-4 .. 2^3: float8e8m0 has no zero.
      for (auto& x : v) x = std::ldexp(1.0, static_cast<int>(rng() % 8u) - 4);
    } else if (p.dtype == DType::boolean) {
      for (auto& x : v) x = static_cast<double>(rng() & 1u);
    } else {
      for (auto& x : v) x = static_cast<double>(rng() % 4u);
    }
    out[name] = Tensor::from_f64(p.dtype, p.shape, v, name);
  }
  return out;
}

std::map<std::string, Tensor> complete_inputs(const Model& model, const std::map<std::string, Tensor>& given,
                                              const std::optional<uint64_t>& seed,
                                              const std::map<std::string, int64_t>& dims,
                                              const InputRanges& ranges) {
  if (seed) return random_inputs(model, *seed, dims, given, ranges);
  if (!dims.empty()) throw Error(ErrorKind::usage, "--dim sizes the inputs --random makes: give --random SEED too");
  if (!ranges.empty()) {
    throw Error(ErrorKind::usage, "--input-range sets the values --random makes: give --random SEED too");
  }
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

std::vector<std::map<std::string, Tensor>> verify_input_sets(const Model& model, const VerifyInputs& in) {
  if (!in.sets.empty()) return in.sets;
  return {random_inputs(model, in.seed, in.dims, in.given, in.ranges)};
}

}  // namespace bnorm

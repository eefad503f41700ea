// The evaluator's outputs bit for bit, hashed: two small networks built like
// the bench networks (bench/gen_nets.py: Conv + BatchNormalization + Relu
// stages, MaxPool, a residual Add, a depthwise Conv, ConvTranspose, Gemm,
// MatMul; DynamicQuantizeLinear + ConvInteger, QuantizeLinear /
// DequantizeLinear around a Conv) run at every kernel level and product
// width (isa.h), with and without AVX512-VNNI where the CPU has it, and on
// one and two threads, in float and in double.
//
// What it asserts:
//   - every level, width and thread count gives the same bits;
//   - those bits are the ones recorded below. The record changes only when
//     the semantics do (docs/semantics.md: a decision, dated there), never
//     with a speed change: a kernel that is faster but computes a single
//     element differently fails here;
//   - the float network is within float rounding of the same network run
//     in double (a sanity check that the recorded bits are right at all).
// Weights and inputs are small multiples of 2^-11, exact in both types, from
// an integer hash: no libm, no random engine, the same on every machine.
// The ops are those whose results need no libm either (sqrt is correctly
// rounded), so the record holds wherever the kernels' contract does.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <map>
#include <cstdint>
#include <string>
#include <vector>

#include "support/kernel_test_support.hpp"
#include "support/test_graph.h"

namespace bnorm {
namespace {

using test::GraphBuilder;
using test::set_attr;
using test::set_ints;

// Element i of tensor `seed`: a multiple of 2^-11 in [-0.49, 0.49].
double value_at(uint32_t seed, size_t i) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ (seed * 40503u + 0x9E3779B9u);
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return (static_cast<double>(h % 2001) - 1000.0) / 2048.0;
}

Tensor filled(DType t, std::vector<int64_t> dims, uint32_t seed, double offset = 0) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = value_at(seed, i) + offset;
  return Tensor::from_f64(t, std::move(dims), v);
}

class Net {
 public:
  Net(DType t, int64_t opset) : t_(t), g_(opset) {}

  std::string conv(const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t group = 1) {
    const std::string w = fresh("w"), b = fresh("b"), y = fresh("conv");
    g_.initializer(w, filled(t_, {cout, cin / group, k, k}, seed_++));
    g_.initializer(b, filled(t_, {cout}, seed_++));
    auto& n = g_.node("Conv", {x, w, b}, {y});
    set_ints(n, "kernel_shape", {k, k});
    set_ints(n, "strides", {stride, stride});
    set_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    set_attr(n, "group", group);
    return y;
  }

  std::string bn(const std::string& x, int64_t c) {
    const std::string s = fresh("s"), b = fresh("b"), m = fresh("m"), v = fresh("v"), y = fresh("bn");
    g_.initializer(s, filled(t_, {c}, seed_++, 1.0));
    g_.initializer(b, filled(t_, {c}, seed_++));
    g_.initializer(m, filled(t_, {c}, seed_++));
    g_.initializer(v, filled(t_, {c}, seed_++, 1.0));
    g_.node("BatchNormalization", {x, s, b, m, v}, {y});
    return y;
  }

  std::string op(const std::string& type, const std::vector<std::string>& in) {
    const std::string y = fresh(type);
    g_.node(type, in, {y});
    return y;
  }

  std::string stage(const std::string& x, int64_t cin, int64_t cout, int64_t stride) {
    return op("Relu", {bn(conv(x, cin, cout, 3, stride), cout)});
  }

  GraphBuilder& graph() { return g_; }
  std::string weight(std::vector<int64_t> dims) {
    const std::string w = fresh("w");
    g_.initializer(w, filled(t_, std::move(dims), seed_++));
    return w;
  }

 private:
  std::string fresh(const std::string& stem) { return stem + std::to_string(count_++); }
  DType t_;
  GraphBuilder g_;
  uint32_t seed_ = 1;
  int count_ = 0;
};

// A ResNet-like stack on [1, 8, 24, 24]: K from 72 to 576 (past one panel
// of every level), 576 and 144 output columns, odd edges.
Model residual_net(DType t) {
  Net n(t, 13);
  n.graph().input("x", t, {1, 8, 24, 24});
  std::string y = n.stage("x", 8, 16, 1);
  auto& pool = n.graph().node("MaxPool", {y}, {"pooled"});
  set_ints(pool, "kernel_shape", {3, 3});
  set_ints(pool, "strides", {2, 2});
  set_ints(pool, "pads", {1, 1, 1, 1});
  std::string r = n.stage("pooled", 16, 16, 1);
  r = n.bn(n.conv(r, 16, 16, 3, 1), 16);
  y = n.op("Relu", {n.op("Add", {r, "pooled"})});
  y = n.stage(y, 16, 64, 1);
  y = n.conv(y, 64, 64, 3, 1, 64);  // depthwise
  y = n.stage(y, 64, 32, 2);
  const std::string wt = n.weight({32, 8, 2, 2});
  auto& up = n.graph().node("ConvTranspose", {y, wt}, {"up"});
  set_ints(up, "strides", {2, 2});
  y = n.op("GlobalAveragePool", {"up"});
  y = n.op("Flatten", {y});
  auto& gemm = n.graph().node("Gemm", {y, n.weight({10, 8}), n.weight({10})}, {"logits"});
  set_attr(gemm, "transB", int64_t{1});
  n.graph().output("logits");
  n.graph().output("up");
  return n.graph().model();
}

// The quantized bench networks' forms (bench/gen_nets.py's yolo_int8 and
// resnet_qdq) in small: DynamicQuantizeLinear + ConvInteger + rescale +
// Relu twice (K = 72 and 144, stride 2), and QuantizeLinear /
// DequantizeLinear around a Conv whose int8 weights are dequantized per
// output channel. Only `t` = float32 exists for these ops; float64 runs the
// QDQ part's Conv on a double copy of its input.
Model quantized_net(DType t) {
  Net n(t, 13);
  GraphBuilder& g = n.graph();
  g.input("x", t, {1, 8, 12, 12});
  auto int8s = [](std::vector<int64_t> dims, uint32_t seed, bool unsigned_) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<double> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::round(value_at(seed, i) * 254) + (unsigned_ ? 128 : 0);
    return Tensor::from_f64(unsigned_ ? DType::uint8 : DType::int8, std::move(dims), v);
  };
  auto scales = [](int64_t count, uint32_t seed) {
    std::vector<double> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = (std::fabs(value_at(seed, i)) + 0.25) / 64;
    return Tensor::from_f64(DType::float32, {count}, v);
  };
  std::string x = "x";
  if (t != DType::float32) {
    auto& c = g.node("Cast", {"x"}, {"x32"});
    set_attr(c, "to", int64_t{1});
    x = "x32";
  }
  std::string y = x;
  int64_t cin = 8;
  for (int64_t stage = 0; stage < 2; ++stage) {
    const std::string p = "s" + std::to_string(stage) + "_";
    const int64_t cout = 16;
    g.node("DynamicQuantizeLinear", {y}, {p + "q", p + "qs", p + "qz"});
    g.initializer(p + "w", int8s({cout, cin, 3, 3}, 50 + static_cast<uint32_t>(stage), stage == 1));
    g.initializer(p + "wz", int8s({cout}, 60 + static_cast<uint32_t>(stage), stage == 1));
    auto& conv = g.node("ConvInteger", {p + "q", p + "w", p + "qz", p + "wz"}, {p + "acc"});
    set_ints(conv, "kernel_shape", {3, 3});
    set_ints(conv, "pads", {1, 1, 1, 1});
    set_ints(conv, "strides", {stage + 1, stage + 1});
    auto& cast = g.node("Cast", {p + "acc"}, {p + "accf"});
    set_attr(cast, "to", int64_t{1});
    g.initializer(p + "ws", Tensor::from_f64(DType::float32, {1}, {0.0078125}));
    g.node("Mul", {p + "qs", p + "ws"}, {p + "scale"});
    g.node("Mul", {p + "accf", p + "scale"}, {p + "y"});
    g.node("Relu", {p + "y"}, {p + "r"});
    y = p + "r";
    cin = cout;
  }
  // QDQ: activations per tensor, weights per output channel.
  g.initializer("qs", Tensor::from_f64(DType::float32, {}, {0.0625}));
  g.initializer("qz", Tensor::from_f64(DType::uint8, {}, {128}));
  g.node("QuantizeLinear", {y, "qs", "qz"}, {"yq"});
  g.node("DequantizeLinear", {"yq", "qs", "qz"}, {"ydq"});
  g.initializer("w3", int8s({8, 16, 3, 3}, 70, false));
  g.initializer("w3s", scales(8, 71));
  g.initializer("w3z", Tensor::from_f64(DType::int8, {8}, std::vector<double>(8, 0)));
  auto& dq = g.node("DequantizeLinear", {"w3", "w3s", "w3z"}, {"w3f"});
  set_attr(dq, "axis", int64_t{0});
  std::string a = "ydq", w = "w3f";
  if (t != DType::float32) {
    auto& c1 = g.node("Cast", {"ydq"}, {"ydq64"});
    set_attr(c1, "to", int64_t{11});
    auto& c2 = g.node("Cast", {"w3f"}, {"w3f64"});
    set_attr(c2, "to", int64_t{11});
    a = "ydq64";
    w = "w3f64";
  }
  auto& conv = g.node("Conv", {a, w}, {"qdq"});
  set_ints(conv, "kernel_shape", {3, 3});
  set_ints(conv, "pads", {1, 1, 1, 1});
  g.output("qdq");
  g.output(y);
  return g.model();
}

// Products straight from MatMul: 37 rows (3 x 12 + 1), 70 columns, K 300.
Model matmul_net(DType t) {
  Net n(t, 13);
  n.graph().input("a", t, {37, 300});
  const std::string y = n.op("MatMul", {"a", n.weight({300, 70})});
  n.op("Relu", {y});
  n.graph().node("MatMul", {y, n.weight({70, 3})}, {"out"});
  n.graph().output("out");
  return n.graph().model();
}

uint64_t fnv1a(const std::vector<uint8_t>& bytes, uint64_t h = 1469598103934665603ull) {
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

// Every output's bytes, in name order, hashed together.
uint64_t run_hash(const Model& m, const std::map<std::string, Tensor>& inputs) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& [name, t] : evaluate(m, inputs)) h = fnv1a(t.bytes, h);
  return h;
}

struct Network {
  const char* name;
  Model (*build)(DType);
  std::string input;
  std::vector<int64_t> dims;
  uint64_t f32_hash, f64_hash;
};

// Recorded 2026-11-27, with products fused (docs/semantics.md).
const Network kNetworks[] = {
    {"residual", residual_net, "x", {1, 8, 24, 24}, 0x74de0426ed09771dull, 0x2e37513d06f781c3ull},
    {"matmul", matmul_net, "a", {37, 300}, 0xe162e73f4ec2b551ull, 0xc4af09302de9f1b1ull},
    {"quantized", quantized_net, "x", {1, 8, 12, 12}, 0x3f4ae703eeb467abull, 0x449d645f3c8f1c7eull},
};

TEST_CASE("The bench-like networks give the recorded bits at every kernel level width and thread count", "[eval][bits]") {
  kernels::testing::SettingsGuard guard;
  const int threads = omp_get_max_threads();
  for (const Network& net : kNetworks) {
    for (DType t : {DType::float32, DType::float64}) {
      const Model m = net.build(t);
      const std::map<std::string, Tensor> inputs{{net.input, filled(t, net.dims, 99)}};
      const uint64_t want = t == DType::float32 ? net.f32_hash : net.f64_hash;
      kernels::testing::for_each_product_variant([&](const std::string& level) {
        for (bool vnni : {false, true}) {
          if (vnni && !kernels::set_avx512_vnni(true)) continue;
          kernels::set_avx512_vnni(vnni);
          for (int n : {1, 2}) {
            omp_set_num_threads(n);
            INFO(net.name << " " << dtype_name(t) << " at " << level << (vnni ? " VNNI" : "") << " on " << n
                          << " threads");
            const uint64_t got = run_hash(m, inputs);
            UNSCOPED_INFO("hash 0x" << std::hex << got);
            CHECK(got == want);
          }
        }
      });
      omp_set_num_threads(threads);
    }
  }
}

TEST_CASE("The bench-like float networks are within float rounding of their double twins", "[eval][bits]") {
  for (const Network& net : kNetworks) {
    const Model m32 = net.build(DType::float32), m64 = net.build(DType::float64);
    const auto y32 = evaluate(m32, {{net.input, filled(DType::float32, net.dims, 99)}});
    const auto y64 = evaluate(m64, {{net.input, filled(DType::float64, net.dims, 99)}});
    for (const auto& [name, t] : y32) {
      const std::vector<double> a = t.to_f64(), b = y64.at(name).to_f64();
      REQUIRE(a.size() == b.size());
      double scale = 0;
      for (double v : b) scale = std::max(scale, std::fabs(v));
      INFO(net.name << " " << name);
      REQUIRE(scale > 0);  // a network whose output is all zeros would record nothing
      for (size_t i = 0; i < a.size(); ++i) {
        INFO(net.name << " " << name << " at " << i);
        REQUIRE(std::fabs(a[i] - b[i]) <= 1e-4 * scale);
      }
    }
  }
}

}  // namespace
}  // namespace bnorm

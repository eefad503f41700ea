// bnorm eval A --compare B --trace on a generated network with one planted
// divergence: the trace names the planted node, also when B is the original
// folded or moved to another opset, and follows the rename map.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/test_graph.h"
#include "eval/report/trace.h"
#include "model/model.h"
#include "model/tensor_file.h"
#include "support/cli.h"

using namespace bnorm;
using namespace bnorm::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kBlocks = 6;
constexpr int kPlanted = 3;  // its conv has no BatchNormalization after it, so no transform renames its output

// Deterministic values in [-0.5, 0.5).
Tensor filled(std::vector<int64_t> dims, uint32_t seed, double offset = 0) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(offset + (s >> 8) / 16777216.0 - 0.5);
  }
  return t;
}

// x [1, 3, 8, 8] -> kBlocks x (Conv 3x3 [-> BatchNormalization] -> Relu) -> y, opset 9.
Model network(bool perturb, int planted = kPlanted) {
  GraphBuilder b(9);
  b.input("x", DType::float32, {1, 3, 8, 8});
  std::string prev = "x";
  int64_t cin = 3;
  for (int k = 0; k < kBlocks; ++k) {
    const std::string s = std::to_string(k);
    Tensor w = filled({4, cin, 3, 3}, 10 + k);
    if (perturb && k == planted) w.data<float>()[5] += 0.5f;
    b.initializer("w" + s, w);
    b.initializer("cb" + s, filled({4}, 20 + k));
    auto& conv = b.node("Conv", {prev, "w" + s, "cb" + s}, {"c" + s}, "conv" + s);
    auto* pads = conv.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    std::string into_relu = "c" + s;
    if (k != kPlanted) {
      b.initializer("scale" + s, filled({4}, 30 + k, 1.0));
      b.initializer("bias" + s, filled({4}, 40 + k));
      b.initializer("mean" + s, filled({4}, 50 + k));
      b.initializer("var" + s, filled({4}, 60 + k, 1.0));
      b.node("BatchNormalization", {"c" + s, "scale" + s, "bias" + s, "mean" + s, "var" + s}, {"b" + s}, "bn" + s);
      into_relu = "b" + s;
    }
    b.node("Relu", {into_relu}, {k + 1 == kBlocks ? "y" : "r" + s}, "relu" + s);
    prev = "r" + s;
    cin = 4;
  }
  b.output("y");
  b.graph().set_name("net");
  Model m = b.model();
  m.proto.set_ir_version(4);  // initializers need not be graph inputs
  return m;
}

void save(Model m, const fs::path& p) { save_model(m, p); }

json trace(const fs::path& a, const fs::path& b, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"eval", a.string(), "--compare", b.string(), "--trace", "--random", "3", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 1);
  return json::parse(r.out);
}

void check_planted(const json& j) {
  const json& first = j["trace"]["first_divergence"];
  CHECK(first["name"] == "c3");
  CHECK(first["producer_a"] == "conv3");
  CHECK(first["producer_b"] == "conv3");
  CHECK(first["path"].back() == "conv3");
  CHECK(first["path"].front() == "conv0");
  // Every value before it agrees.
  for (const auto& v : j["trace"]["values"]) {
    if (v["name"] == "c3") break;
    CHECK(v["pass"] == true);
  }
}

}  // namespace

TEST_CASE("the trace names the node whose weight was changed", "[cli][trace]") {
  TempDir tmp;
  save(network(false), tmp / "orig.onnx");
  save(network(true), tmp / "planted.onnx");
  const json j = trace(tmp / "planted.onnx", tmp / "orig.onnx");
  check_planted(j);
  // Every node output is shared: Conv, BatchNormalization and Relu of each block.
  CHECK(j["trace"]["values"].size() == 3 * kBlocks - 1);
  CHECK(j["outputs"][0]["pass"] == false);
  for (const auto& v : j["trace"]["values"]) {
    int64_t sum = 0;
    for (const auto& n : v["histogram"]) sum += n.get<int64_t>();
    CHECK(sum == v["elements"].get<int64_t>());
  }
  const auto text = run_cli({"eval", (tmp / "planted.onnx").string(), "--compare", (tmp / "orig.onnx").string(),
                             "--trace", "--random", "3"});
  CHECK(text.out.find("first divergence: 'c3'") != std::string::npos);
  CHECK(text.out.find("produced in A by conv3") != std::string::npos);
}

TEST_CASE("the trace finds the planted node against the original folded", "[cli][trace]") {
  TempDir tmp;
  save(network(false), tmp / "orig.onnx");
  save(network(true), tmp / "planted.onnx");
  const auto fold = run_cli({"fold", (tmp / "orig.onnx").string(), "-o", (tmp / "folded.onnx").string()});
  REQUIRE(fold.exit_code == 0);
  check_planted(trace(tmp / "planted.onnx", tmp / "folded.onnx"));
  // A changed Conv that a BatchNormalization follows: folded, its output
  // takes the BatchNormalization's name, so the first shared value that
  // differs is that name, made by the Conv in B and the BatchNormalization in A.
  save(network(true, 1), tmp / "planted1.onnx");
  const json j1 = trace(tmp / "planted1.onnx", tmp / "folded.onnx");
  CHECK(j1["trace"]["first_divergence"]["name"] == "b1");
  CHECK(j1["trace"]["first_divergence"]["producer_a"] == "bn1");
  CHECK(j1["trace"]["first_divergence"]["producer_b"] == "conv1");
  // Folded against the original: every shared value agrees.
  const auto same = run_cli({"eval", (tmp / "orig.onnx").string(), "--compare", (tmp / "folded.onnx").string(),
                             "--trace", "--random", "3", "--json"});
  REQUIRE(same.exit_code == 0);
  CHECK(json::parse(same.out)["trace"]["first_divergence"].is_null());
}

TEST_CASE("the trace finds the planted node against the original at opset 11", "[cli][trace]") {
  TempDir tmp;
  save(network(false), tmp / "orig.onnx");
  save(network(true), tmp / "planted.onnx");
  const auto up = run_cli({"upgrade", (tmp / "orig.onnx").string(), "--to", "11", "-o", (tmp / "o11.onnx").string()});
  INFO(up.out << up.err);
  REQUIRE(up.exit_code == 0);
  check_planted(trace(tmp / "planted.onnx", tmp / "o11.onnx"));
  check_planted(trace(tmp / "planted.onnx", tmp / "o11.onnx", {"--rtol", "1e-3"}));
}

TEST_CASE("the trace pairs values through the model's bnorm.renames map", "[cli][trace]") {
  TempDir tmp;
  save(network(true), tmp / "planted.onnx");
  Model renamed = network(false);
  for (auto& n : *renamed.proto.mutable_graph()->mutable_node()) {
    for (auto& s : *n.mutable_input())
      if (s == "c3") s = "conv3_output";
    for (auto& s : *n.mutable_output())
      if (s == "c3") s = "conv3_output";
  }
  auto* p = renamed.proto.add_metadata_props();
  p->set_key(kRenamesKey);
  p->set_value(R"({"conv3_output": "c3"})");
  save_model(renamed, tmp / "renamed.onnx");
  REQUIRE(read_renames(load_model(tmp / "renamed.onnx")).at("conv3_output") == "c3");
  const json j = trace(tmp / "planted.onnx", tmp / "renamed.onnx");
  check_planted(j);
  bool paired = false;
  for (const auto& v : j["trace"]["values"]) paired = paired || (v["name"] == "c3" && v["name_b"] == "conv3_output");
  CHECK(paired);
}

TEST_CASE("the trace aggregates input sets and holds one of the first model's values at a time", "[cli][trace]") {
  TempDir tmp;
  Model planted = network(true);
  save_model(planted, tmp / "planted.onnx");
  save(network(false), tmp / "orig.onnx");
  for (int s = 0; s < 2; ++s) {
    fs::create_directories(tmp / ("sets/test_data_set_" + std::to_string(s)));
    write_tensor_file(filled({1, 3, 8, 8}, 100 + s), (tmp / ("sets/test_data_set_" + std::to_string(s)) / "input_0.pb"));
  }
  const json j = trace(tmp / "planted.onnx", tmp / "orig.onnx", {});
  const auto r = run_cli({"eval", (tmp / "planted.onnx").string(), "--compare", (tmp / "orig.onnx").string(),
                          "--trace", "--inputs", (tmp / "sets").string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 1);
  const json k = json::parse(r.out);
  CHECK(k["data_sets"] == 2);
  CHECK(k["trace"]["values"][0]["elements"] == 2 * 4 * 64);
  check_planted(k);
  // A runs first with its shared values written to a temporary file, then
  // (auto criterion) A in float64 with their float64 twins written to a
  // second one, then B compares each as it produces it: one of A's values
  // (1 KiB) and its twin (2 KiB) are in memory at a time, and all 17 shared
  // values went to the files. With the fixed criterion there is no twin.
  for (const bool fixed : {true, false}) {
    TraceOptions opt;
    opt.criterion.fixed = fixed;
    Tracer direct(planted, planted, opt);
    std::map<std::string, Tensor> in{{"x", filled({1, 3, 8, 8}, 5)}};
    direct.run(in);
    const TraceResult tr = direct.result();
    const int per_value = fixed ? 4 * 64 * 4 : 4 * 64 * (4 + 8);
    CHECK(tr.first == -1);
    CHECK(tr.values.size() == 3 * kBlocks - 1);
    CHECK(tr.values.front().name == "c0");
    CHECK(tr.values.back().name == "y");
    CHECK(tr.values.back().criterion == (fixed ? Criterion::fixed : Criterion::rounding));
    CHECK(tr.peak_kept_bytes == per_value);
    CHECK(tr.spilled_bytes == (3 * kBlocks - 1) * per_value);
  }
  CHECK(j["trace"]["uncompared"] == 0);
}

TEST_CASE("the options --trace and --inputs without --compare are usage errors", "[cli][trace]") {
  TempDir tmp;
  save(network(false), tmp / "orig.onnx");
  CHECK(run_cli({"eval", (tmp / "orig.onnx").string(), "--trace", "--random", "1"}).exit_code == 2);
  CHECK(run_cli({"eval", (tmp / "orig.onnx").string(), "--report", (tmp / "r.html").string(), "--random", "1"})
            .exit_code == 2);
  CHECK(run_cli({"eval", testdata("").string(), "--trace"}).exit_code == 2);
  CHECK_FALSE(fs::exists(tmp / "r.html"));
  CHECK(run_cli({"eval", (tmp / "orig.onnx").string(), "--compare", (tmp / "orig.onnx").string(), "--inputs",
                 (tmp / "nowhere").string()})
            .exit_code == 2);
}

TEST_CASE("diff_values counts errors per decade, ULPs, channel maxima and the worst error/tolerance ratio",
          "[cli][trace]") {
  const float nan = std::nanf(""), inf = INFINITY;
  const float two_up = std::nextafter(2.0f, 3.0f);
  Tensor a(DType::float32, {7}), b(DType::float32, {7});
  const float av[] = {1, 2, 0, nan, inf, 1e-13f, 100};
  const float bv[] = {1, two_up, 1e-3f, nan, inf, 0, 100.5f};
  std::copy(av, av + 7, a.data<float>());
  std::copy(bv, bv + 7, b.data<float>());
  const ValueDiff d = diff_values(a, b, {1e-4, 1e-5});
  // Errors: 0, 2^-22, 1e-3, NaN=NaN, inf=inf, 1e-13, 0.5.
  std::array<int64_t, kErrorBins> want{};
  want[0] = 3;
  want[-7 + 14] = 1;   // 2.38e-7 in [1e-7, 1e-6)
  want[-3 + 14] = 1;   // float 1e-3 is 1.00000005e-3
  want[1] = 1;         // float 1e-13 is 9.9999998e-14: below 1e-12
  want[-1 + 14] = 1;   // 0.5
  CHECK(d.histogram == want);
  CHECK(d.diff.mismatches == 2);  // 1e-3 against 0 and 0.5 against 100
  CHECK(d.diff.elements == 7);
  CHECK(d.diff.max_abs == 0.5);
  CHECK(d.diff.max_rel == 1.0);
  uint32_t milli;
  const float m = 1e-3f;
  std::memcpy(&milli, &m, 4);
  CHECK(d.max_ulp == static_cast<double>(milli));  // from +0 to 1e-3: its bit pattern
  CHECK(d.worst == Approx(static_cast<double>(1e-3f) / 1e-5));
  CHECK_FALSE(d.diff.pass);
  CHECK(d.channel_max.empty());

  Tensor tiny(DType::float32, {1}), neg(DType::float32, {1});
  tiny.data<float>()[0] = std::numeric_limits<float>::denorm_min();
  neg.data<float>()[0] = -std::numeric_limits<float>::denorm_min();
  CHECK(diff_values(tiny, neg, {0, 0}).max_ulp == 2);  // across zero: -min, 0, +min

  const Tensor h1 = Tensor::from_f64(DType::float16, {2}, {1.0, -2.0});
  const Tensor h2 = Tensor::from_f64(DType::float16, {2}, {1.0009765625, -2.001953125});
  CHECK(diff_values(h1, h2, {0, 0}).max_ulp == 1);

  Tensor z(DType::float32, {1, 2, 1, 2}), c(DType::float32, {1, 2, 1, 2});
  c.data<float>()[1] = 0.25f;
  c.data<float>()[2] = -0.5f;
  const ValueDiff dc = diff_values(z, c, {0, 0});
  CHECK(dc.channel_max == std::vector<double>{0.25, 0.5});
  CHECK(dc.worst == INFINITY);  // zero tolerance

  ValueDiff sum = dc;
  sum.merge(d);
  CHECK(sum.diff.elements == 11);
  CHECK(sum.diff.max_abs == 0.5);
  CHECK(sum.histogram[0] == 3 + 2);
  CHECK(error_bin_label(0) == "0");
  CHECK(error_bin_label(7) == "1e-7");
  CHECK(error_bin_label(kErrorBins - 1) == "NaN/inf");
}

TEST_CASE("a trace whose temporary file cannot grow (full disk) is exit 2 saying so, and leaves no file", "[cli][trace]") {
  TempDir tmp;
  Model planted = network(true);
  save_model(planted, tmp / "planted.onnx");
  save(network(false), tmp / "orig.onnx");
  CliLimits limits;
  limits.file_size = 2048;  // two of the 17 shared values (1 KiB each)
  const auto r = run_cli({"eval", (tmp / "planted.onnx").string(), "--compare", (tmp / "orig.onnx").string(),
                          "--trace", "--random", "1"},
                         limits);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("could not write") && Catch::Contains("temporary file"));
  CHECK(r.out.empty());
}

TEST_CASE("a trace with TMPDIR that does not exist is an error naming it", "[trace]") {
  TempDir tmp;
  const Model planted = network(true);
  const std::string missing = (tmp / "no such dir").string();
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", missing.c_str(), 1);
  Tracer t(planted, planted);
  std::string message;
  try {
    t.run({{"x", filled({1, 3, 8, 8}, 5)}});
  } catch (const std::exception& e) {
    message = e.what();
  }
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  CHECK_THAT(message, Catch::Contains("cannot create a temporary file") && Catch::Contains(missing));
}

// ONNX's Conv and ConvTranspose conformance models with a BatchNormalization
// appended, folded. The expected result comes from ONNX's own expected
// output of the convolution with the BN formula applied here in float64:
//   z = (y - mean) / sqrt(var + eps) * s + B
// so neither the evaluator nor the folder judges itself.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "eval/run/evaluator.h"
#include "model/model.h"
#include "model/tensor_file.h"
#include "model/tensor_proto.h"
#include "transforms/fold/bn_fold.h"
#include "transforms/fold/verify.h"

using namespace bnorm;
namespace fs = std::filesystem;

namespace {

// The model with every input but X made an initializer (from the test's
// data) and a BatchNormalization appended to its output.
Model with_bn(const fs::path& dir, std::map<std::string, Tensor>& x, Tensor& y, std::vector<double> params[4]) {
  Model m = load_model(dir / "model.onnx");
  auto* g = m.proto.mutable_graph();
  const fs::path set = dir / "test_data_set_0";
  for (int i = g->input_size() - 1; i >= 0; --i) {
    Tensor t = read_tensor_file(set / ("input_" + std::to_string(i) + ".pb"));
    if (i == 0) {
      x[g->input(0).name()] = t;
      continue;
    }
    t.name = g->input(i).name();
    encode_tensor(t, g->add_initializer());
    g->mutable_input()->DeleteSubrange(i, 1);
  }
  y = read_tensor_file(set / "output_0.pb");
  const int64_t C = y.dims.at(1);
  const char* names[] = {"bn.s", "bn.B", "bn.mean", "bn.var"};
  for (int k = 0; k < 4; ++k) {
    params[k].resize(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) params[k][c] = k == 3 ? 0.25 + 0.5 * c : std::cos(1.0 + k + 0.7 * c);
    encode_tensor(Tensor::from_f64(DType::float32, {C}, params[k], names[k]), g->add_initializer());
  }
  auto* bn = g->add_node();
  bn->set_op_type("BatchNormalization");
  bn->set_name("appended_bn");
  bn->add_input(g->output(0).name());
  for (const char* n : names) bn->add_input(n);
  bn->add_output("z");
  g->mutable_output(0)->set_name("z");
  g->mutable_output(0)->clear_type();
  return m;
}

}  // namespace

TEST_CASE("ONNX's Conv and ConvTranspose models with a BN appended fold to ONNX's output through BN", "[fold]") {
  int folded = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ONNX_TESTDATA_DIR) / "node")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_conv_with", 0) != 0 && name.rfind("test_convtranspose", 0) != 0) continue;
    INFO(name);
    std::map<std::string, Tensor> x;
    Tensor y;
    std::vector<double> p[4];
    Model m = with_bn(e.path(), x, y, p);
    const Model before = m;
    const FoldReport r = fold_batch_norms(m);
    REQUIRE(r.folded.size() == 1);
    for (const auto& n : m.proto.graph().node()) CHECK(n.op_type() != "BatchNormalization");
    const Tensor z = evaluate(m, x).at("z");
    REQUIRE(z.dims == y.dims);
    const auto yv = y.to_f64(), zv = z.to_f64();
    const int64_t C = y.dims[1], inner = y.numel() / (y.dims[0] * C);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int64_t c = (i / inner) % C;
      const double want = (yv[i] - p[2][c]) / std::sqrt(p[3][c] + 1e-5) * p[0][c] + p[1][c];
      CHECK(zv[i] == Approx(want).epsilon(1e-4).margin(1e-4));
    }
    const auto checks = verify_folds(before, m, r, 3);
    REQUIRE(checks.size() == 1);
    CHECK(checks[0].pass);
    ++folded;
  }
  CHECK(folded >= 14);
}

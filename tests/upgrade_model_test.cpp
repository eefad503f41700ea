// bnorm upgrade on whole models and through the CLI: the generated test
// models, ONNX's BatchNorm conformance models, small CNNs, subgraphs, the
// ops bnorm converts itself (Softmax 12 -> 13) and the failures it names.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "support/test_graph.h"
#include "support/cli.h"
#include "transforms/upgrade/upgrade.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

bool same_numbers(const fs::path& a, const fs::path& b) {
  const auto r = run_cli({"eval", a.string(), "--compare", b.string(), "--random", "3"});
  INFO(r.out << r.err);
  return r.exit_code == 0;
}

int count_op(const onnx::GraphProto& g, const std::string& op) {
  int k = 0;
  for (const auto& n : g.node()) k += n.op_type() == op;
  return k;
}

// X float [2, 3, 4]; known_shape false: symbolic dims; no_shape: no shape at all.
Model softmax_model(int64_t opset, const std::string& op, int64_t axis, bool known_shape, bool no_shape = false) {
  GraphBuilder b(opset);
  auto& m = const_cast<Model&>(b.model());
  m.proto.set_ir_version(required_ir_version(opset));
  m.proto.mutable_graph()->set_name("g");
  b.input("x", DType::float32, {2, 3, 4});
  auto* shape = b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int i = 0; i < 3 && !known_shape; ++i) shape->mutable_dim(i)->set_dim_param("d" + std::to_string(i));
  if (no_shape) b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  test::set_attr(b.node(op, {"x"}, {"y"}, "sm"), "axis", axis);
  *b.graph().add_output() = b.graph().input(0);
  b.graph().mutable_output(0)->set_name("y");
  return b.model();
}


}  // namespace

TEST_CASE("the generated models upgrade to 15 with the same numbers", "[upgrade][cli]") {
  TempDir tmp;
  for (const char* name : {"legacy_opset1.onnx", "legacy_training_opset1.onnx", "bn_spatial0_opset6.onnx",
                           "bn_training_5out_opset9.onnx", "demo_opset6.onnx", "resnet_block_opset9.onnx",
                           "constant_params_opset9.onnx", "constant_params_opset12.onnx", "small_cnn_opset6.onnx",
                           "small_cnn_opset7.onnx", "small_cnn_opset8.onnx", "small_cnn_opset9.onnx",
                           "bn14_training.onnx"}) {
    INFO(name);
    const fs::path out = tmp / (std::string(name) + ".15.onnx");
    const auto r = run_cli({"upgrade", testdata(name).string(), "-o", out.string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(default_opset(load_model(out).proto) == 15);
    CHECK(same_numbers(testdata(name), out));
  }
}

TEST_CASE("ONNX's pytorch-converted BatchNorm models upgraded to 15 still give the expected outputs", "[upgrade][cli]") {
  TempDir tmp;
  int checked = 0;
  for (const auto& dir : fs::directory_iterator(fs::path(ONNX_TESTDATA_DIR) / "pytorch-converted")) {
    const std::string name = dir.path().filename().string();
    if (name.rfind("test_BatchNorm", 0) != 0) continue;
    INFO(name);
    const fs::path copy = tmp / name;
    fs::copy(dir.path(), copy, fs::copy_options::recursive);
    const auto up = run_cli({"upgrade", (dir.path() / "model.onnx").string(), "-o", (copy / "model.onnx").string()});
    INFO(up.out << up.err);
    REQUIRE(up.exit_code == 0);
    CHECK(default_opset(load_model(copy / "model.onnx").proto) == 15);
    const auto ev = run_cli({"eval", copy.string()});
    INFO(ev.out << ev.err);
    CHECK(ev.exit_code == 0);
    ++checked;
  }
  CHECK(checked == 5);
}

TEST_CASE("normalization nodes inside If branches are converted", "[upgrade]") {
  Model m = load_model(testdata("subgraph_if_opset11.onnx"));
  const UpgradeReport r = upgrade_model(m, {});
  check_model_full(m.proto);
  REQUIRE(r.nodes.size() == 2);
  for (const auto& n : r.nodes) {
    CHECK(n.graph != "main");
    CHECK(n.to == 15);
  }
  CHECK(r.to_ir == 8);
}

TEST_CASE("Softmax, LogSoftmax and Hardmax 12 -> 13 over a non-last axis need no static shape, and use it when known", "[upgrade]") {
  const std::string op = GENERATE("Softmax", "LogSoftmax", "Hardmax");
  const bool known = GENERATE(true, false);
  Model m = softmax_model(12, op, 1, known);
  const UpgradeReport r = upgrade_model(m, {});
  check_model_full(m.proto);
  const auto& g = m.proto.graph();
  CHECK(count_op(g, "Flatten") == 1);
  CHECK(count_op(g, "Shape") == (known ? 0 : 1));  // known dims: a constant shape (it can go below 5)
  CHECK(count_op(g, "Reshape") == 1);
  REQUIRE(r.rewrites.size() == 1);
  CHECK(r.rewrites[0].op == op);
}

TEST_CASE("Softmax over the last axis only has its axis rewritten", "[upgrade]") {
  Model m = softmax_model(12, "Softmax", 2, true);
  upgrade_model(m, {});
  CHECK(m.proto.graph().node_size() == 1);
}

TEST_CASE("Softmax, LogSoftmax and Hardmax 13 -> 12, 10 over a non-last axis go between two Transposes, with their numbers",
          "[upgrade]") {
  const std::string op = GENERATE("Softmax", "LogSoftmax", "Hardmax");
  for (const int64_t axis : {0, 1, -2, -3}) {
    for (const int64_t to : {12, 10}) {
      INFO(op << " axis " << axis << " -> " << to);
      const Model m = softmax_model(13, op, axis, true);
      const Model down = converted(m, to);
      const auto& g = down.proto.graph();
      REQUIRE(count_op(g, "Transpose") == 2);
      for (const auto& n : g.node()) {
        if (n.op_type() == op) CHECK(attr_of(n, "axis")->i() == 2);  // the last axis, written non-negative
      }
      expect_same_outputs(m, down);
    }
  }
  // Without the input's rank there is no permutation to write: refused by name.
  const std::string why = upgrade_error_of(softmax_model(13, "Softmax", 1, false, true), 12);
  CHECK(why.find("'sm'") != std::string::npos);
  CHECK(why.find("rank") != std::string::npos);
}

TEST_CASE("removed ops and opsets newer than bnorm converts fail with both named", "[upgrade]") {
  GraphBuilder b(9);
  b.input("x", DType::float32, {1, 3, 4, 4});
  b.node("GivenTensorFill", {"x"}, {"y"}, "fill");  // removed after 9, and bnorm has no lowering for it
  const std::string removed = upgrade_error_of(b.model(), 15);
  CHECK(removed.find("GivenTensorFill") != std::string::npos);
  CHECK(removed.find("opset 9") != std::string::npos);

  GraphBuilder n(29);
  n.input("x", DType::float32, {1, 3});
  n.node("Relu", {"x"}, {"y"}, "relu");
  const std::string newer = upgrade_error_of(n.model(), 15);
  CHECK(newer.find("opset 29") != std::string::npos);
  CHECK(newer.find("1 to 28") != std::string::npos);
}

// Found by fuzz_upgrade (tests/fuzz_regressions/upgrade/): ONNX's IR importer,
// which its converter runs first, dereferences a null value for such names.
TEST_CASE("a graph output or node input that names no value is refused before ONNX's converter", "[upgrade]") {
  GraphBuilder b(9);
  b.input("x", DType::float32, {1, 3});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  b.output("nowhere");
  const std::string output = upgrade_error_of(b.model(), 15);
  CHECK(output.find("graph output 'nowhere'") != std::string::npos);
  CHECK(output.find("names no value") != std::string::npos);

  GraphBuilder c(9);
  c.input("x", DType::float32, {1, 3});
  c.node("Add", {"x", "missing"}, {"y"}, "add");
  c.output("y");
  const std::string input = upgrade_error_of(c.model(), 15);
  CHECK(input.find("node 'add'") != std::string::npos);
  CHECK(input.find("input 'missing' names no value") != std::string::npos);
}

// Found by fuzz_upgrade (tests/fuzz_regressions/upgrade/softmax-without-inputs.onnx):
// the Softmax step read input 0 of a node that had none (out of bounds).
TEST_CASE("a node bnorm's own steps convert, with an input or output count its schema refuses, is an error", "[upgrade]") {
  for (const std::string op : {"Softmax", "Dropout", "Cast"}) {
    for (const bool outputs : {false, true}) {
      GraphBuilder b(op == "Cast" ? 5 : 11);
      b.input("x", DType::float32, {2, 3});
      auto& n = outputs ? b.node(op, {"x"}, {}, "n") : b.node(op, {}, {"y"}, "n");
      if (op == "Cast") test::set_attr(n, "to", int64_t{1});
      b.output("x");
      const std::string e = upgrade_error_of(b.model(), op == "Cast" ? 6 : 13);
      INFO(op << " " << e);
      CHECK(e.find("node 'n' (" + op) != std::string::npos);
      CHECK(e.find(outputs ? "0 outputs; version" : "0 inputs; version") != std::string::npos);
    }
  }
}

TEST_CASE("upgrade CLI: bad --to is exit 2, --json reports per node", "[upgrade][cli]") {
  TempDir tmp;
  const std::string in = testdata("bn_absent_is_test_opset6.onnx").string(), out = (tmp / "o.onnx").string();
  for (const char* to : {"0", "29", "x"}) {
    CHECK(run_cli({"upgrade", in, "-o", out, "--to", to}).exit_code == 2);
    CHECK_FALSE(fs::exists(out));
  }
  const auto r = run_cli({"upgrade", in, "-o", out, "--json", "--inference"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"input", "output", "from_opset", "to_opset", "from_ir", "to_ir", "checked", "norm_nodes",
                          "rewrites", "made_inference", "warnings"}) {
    CHECK(j.contains(key));
  }
  CHECK(j["made_inference"] == nlohmann::json::array({"bn1"}));
  const auto& n = j["norm_nodes"][0];
  CHECK(n["steps"] == nlohmann::json::array({"6->7", "7->9", "9->14", "14->15"}));
  CHECK(n["made_inference"] == true);

  const auto plain = run_cli({"upgrade", in, "-o", out});
  CHECK(plain.exit_code == 0);
  CHECK(plain.err.find("node 'bn1'") != std::string::npos);
  CHECK(plain.out.find("warning") != std::string::npos);
}

TEST_CASE("upgrade CLI: a result the checker refuses is exit 2 and writes nothing", "[upgrade][cli]") {
  TempDir tmp;
  GraphBuilder b(15);
  auto& m = const_cast<Model&>(b.model());
  m.proto.mutable_graph()->set_name("g");
  b.input("x", DType::float32, {1, 3});
  b.node("Relu", {"x"}, {"y"}, "relu");
  auto* o = b.graph().add_output();
  o->set_name("y");
  o->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  o->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(7);  // wrong rank
  save_model(m, tmp / "bad.onnx");
  const std::string out = (tmp / "out.onnx").string();
  const auto r = run_cli({"upgrade", (tmp / "bad.onnx").string(), "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("checker") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK(run_cli({"upgrade", (tmp / "bad.onnx").string(), "-o", out, "--no-check"}).exit_code == 0);
}

TEST_CASE("upgrade keeps external data: the side file is written and the numbers are the same", "[upgrade][cli][external]") {
  // ONNX's converter drops external_data entries (its IR has none), which
  // used to leave tensors with no data at all.
  test::TempDir tmp;
  const auto out = tmp / "up.onnx";
  const auto r = test::run_cli({"upgrade", test::testdata("external/model.onnx").string(), "-o", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::exists(tmp / "up.onnx.data"));
  const auto cmp = test::run_cli({"eval", test::testdata("external/model.onnx").string(), "--compare", out.string(),
                                  "--random", "3"});
  INFO(cmp.err);
  CHECK(cmp.exit_code == 0);
  CHECK(cmp.out.find("the models agree") != std::string::npos);
}

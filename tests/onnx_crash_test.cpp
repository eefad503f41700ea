// Models on which ONNX 1.12's own code (its shape inference, its version
// converter) crashed the process, found by fuzzing and by sweeping its
// inference over every op and version: every command ends with a result or
// an error, never a crash (lib/model/onnx_guards.h, docs/reliability.md).
// The Conv-family cases are with the bad-input matrix (bad_input_test.cpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/conv_bn_model.h"
#include "support/cli.h"

namespace fs = std::filesystem;
using namespace bnorm::test;

// ONNX 1.12's Gemm-6 shape inference dereferenced null on an input of rank
// 0 (found by CI's fuzz smoke run: tests/fuzz_regressions/upgrade/). A Gemm
// with a scalar A is valid enough to load at opset 13 (ONNX's inference
// only reports it); taking it to opset 6 ran the crashing inference in the
// check of the converted model. Now upgrade refuses it first, naming the node.
TEST_CASE("a Gemm with a scalar input taken to opset 6 is refused, not a crash", "[cli][errors][upgrade]") {
  TempDir tmp;
  onnx::ModelProto m;
  {
    std::ifstream in(testdata("fold_cases_opset13.onnx"), std::ios::binary);
    REQUIRE(m.ParseFromIstream(&in));
  }
  bool found = false;
  for (auto& input : *m.mutable_graph()->mutable_input()) {
    if (input.name() != "v") continue;
    input.mutable_type()->mutable_tensor_type()->mutable_shape()->clear_dim();
    found = true;
  }
  REQUIRE(found);
  const auto model = tmp / "gemm_scalar.onnx";
  {
    std::ofstream out(model, std::ios::binary);
    REQUIRE(m.SerializeToOstream(&out));
  }
  for (const char* target : {"6", "1"}) {
    INFO("--to " << target);
    const auto r = run_cli({"upgrade", model.string(), "--to", target, "-o", (tmp / "out.onnx").string()});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("node 'gemm_transB' (Gemm): input 'A' ('v') has rank 0; Gemm multiplies matrices (rank 2)") !=
          std::string::npos);
    CHECK(!fs::exists(tmp / "out.onnx"));
  }
}

namespace {

// One node of `op` at opset `version`, inputs i0, i1, ... declared as float
// tensors of the given ranks (every dim 2; rank 0 a scalar), output o.
onnx::ModelProto single_node(const std::string& op, int64_t version, const std::vector<int>& ranks) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(version);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_name("n1");
  n->set_op_type(op);
  for (size_t k = 0; k < ranks.size(); ++k) {
    const std::string name = "i" + std::to_string(k);
    n->add_input(name);
    auto* in = g->add_input();
    declare(in, name, std::vector<int64_t>(static_cast<size_t>(ranks[k]), 2));
    in->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0 is a shape too
  }
  n->add_output("o");
  g->add_output()->set_name("o");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

}  // namespace

// ONNX 1.12's own code crashed the process on these nodes (found by a sweep
// of its shape inference over every op and version with inputs of rank 0 to
// 3, after the fuzz finding above; lib/model/infer_test.cpp has the
// inference side): RNN-1, GRU-3 and LSTM-1 inference read dims 0 and 1 of
// any X; Scan inference uses its 'body' without checking it is there;
// STFT-17 reads dims of any signal; the converter's Gemm 6 -> 7 adapter
// reads dims 0 and 1 of A and B. inspect (which infers shapes and tolerates
// what inference reports) and upgrade (which converts and checks) now end
// with a result or an error, never a crash; a Gemm whose A or B is not a
// matrix is refused by name before ONNX's converter sees it.
TEST_CASE("nodes that crashed ONNX 1.12's inference or converter end in a result or an error", "[cli][errors]") {
  struct Case {
    const char* op;
    int64_t version;
    std::vector<int> ranks;
  };
  const Case cases[] = {
      {"RNN", 1, {0, 0, 0}}, {"GRU", 3, {1, 1, 1}},     {"LSTM", 1, {0, 2, 2}}, {"Scan", 9, {2}},
      {"Scan", 8, {2, 0}},   {"Gemm", 6, {0, 2, 2}},    {"Gemm", 6, {2, 1, 2}}, {"STFT", 17, {0, 0}},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    const auto model = tmp / "m.onnx";
    {
      std::ofstream out(model, std::ios::binary);
      REQUIRE(single_node(c.op, c.version, c.ranks).SerializeToOstream(&out));
    }
    INFO(c.op << "-" << c.version);
    const auto inspected = run_cli({"inspect", model.string()});
    INFO(inspected.err);
    CHECK((inspected.exit_code == 0 || inspected.exit_code == 2));
    for (const char* target : {"15", "6", "1"}) {
      const auto r = run_cli({"upgrade", model.string(), "--to", target, "-o", (tmp / "out.onnx").string()});
      INFO("--to " << target << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.rfind("bnorm: error: " + model.string() + ": ", 0) == 0);
      if (std::string(c.op) == "Gemm") {
        CHECK(r.err.find("node 'n1' (Gemm): input '") != std::string::npos);
        CHECK(r.err.find("; Gemm multiplies matrices (rank 2)") != std::string::npos);
      }
      CHECK(!fs::exists(tmp / "out.onnx"));
    }
  }
}

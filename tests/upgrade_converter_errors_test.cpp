// No raw text from ONNX's converter reaches a user (issue 26): an attribute
// a version added, at a value other than its default, going below that
// version is refused by bnorm before ONNX's converter runs, naming the
// node, the attribute, its value and the version; any other failure inside
// the converter is read into bnorm's words (the op, its nodes, why), never
// "BaseConverter.h:63: adapter_lookup: Assertion `false` failed". And
// `inspect --to N` says what `upgrade --to N` says.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "support/cli.h"
#include "support/upgrade_support.h"
#include "transforms/upgrade/onnx_converter.h"

using namespace bnorm;
using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

// One node of `op` at `opset` over x [1, 1, 5, 5] (and more inputs), output y.
Model one_node(int64_t opset, const std::string& op, const std::vector<std::string>& extra_inputs,
               const std::function<void(onnx::NodeProto&)>& attrs) {
  TestNet t(opset);
  t.input("x", DType::float32, {1, 1, 5, 5});
  std::vector<std::string> in{"x"};
  for (const auto& e : extra_inputs) {
    t.input(e, e == "i" ? DType::int64 : DType::float32, {1, 1, 5, 5});
    in.push_back(e);
  }
  attrs(t.node(op, in, {"y"}, "the_node"));
  auto* y = t.g().add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DType::float32));
  return t.m;
}

}  // namespace

TEST_CASE("an attribute at a value its older version lacks is refused by name before ONNX's converter runs, and "
          "inspect --to says the same",
          "[upgrade][gaps]") {
  struct Case {
    Model m;
    int64_t to;
    const char* attr;
  };
  const Case cases[] = {
      {one_node(10, "MaxPool", {}, [](onnx::NodeProto& n) {
         set_ints(n, "kernel_shape", {2, 2});
         set_attr(n, "ceil_mode", int64_t{1});
       }), 9, "ceil_mode"},
      {one_node(11, "DepthToSpace", {}, [](onnx::NodeProto& n) {
         set_attr(n, "blocksize", int64_t{1});
         set_string(n, "mode", "CRD");
       }), 10, "mode"},
      {one_node(16, "ScatterElements", {"i", "u"}, [](onnx::NodeProto& n) { set_string(n, "reduction", "add"); }), 15,
       "reduction"},
  };
  TempDir tmp;
  for (const auto& c : cases) {
    Model m = c.m;
    const fs::path in = tmp / "in.onnx", out = tmp / "out.onnx";
    save_model(m, in);
    const auto up = run_cli({"upgrade", in.string(), "--to", std::to_string(c.to), "-o", out.string()});
    INFO(up.err);
    CHECK(up.exit_code == 2);
    CHECK(up.err.find("the_node") != std::string::npos);
    CHECK(up.err.find(std::string("attribute '") + c.attr + "'") != std::string::npos);
    CHECK(up.err.find("Assertion") == std::string::npos);
    CHECK(up.err.find("BaseConverter") == std::string::npos);
    CHECK(!fs::exists(out));
    const auto plan = run_cli({"inspect", in.string(), "--to", std::to_string(c.to)});
    INFO(plan.out);
    CHECK(plan.out.find(std::string("attribute '") + c.attr + "'") != std::string::npos);
    CHECK(plan.out.find("Assertion") == std::string::npos);
  }
}

TEST_CASE("ONNX's converter failures are read into bnorm's words", "[upgrade][gaps]") {
  using upgrade_detail::read_converter_failure;
  auto f = read_converter_failure(
      "./onnx/version_converter/BaseConverter.h:63: adapter_lookup: Assertion `false` failed: No Adapter To Version $9 "
      "for MaxPool");
  CHECK(f.op == "MaxPool");
  CHECK(f.why == "ONNX 1.12's converter has no adapter for MaxPool to version 9, and bnorm has no step for it");
  f = read_converter_failure(
      "./onnx/version_converter/BaseConverter.h:66: adapter_lookup: Assertion `false` failed: No Adapter From Version "
      "$14 for Reshape");
  CHECK(f.op == "Reshape");
  CHECK(f.why.find("from version 14") != std::string::npos);
  f = read_converter_failure("./onnx/version_converter/adapters/x.h:12: adapt: Assertion `a == b` failed: Shape of "
                             "input 2 is not available.");
  CHECK(f.op.empty());
  CHECK(f.why == "ONNX 1.12's converter failed: Shape of input 2 is not available.");
}

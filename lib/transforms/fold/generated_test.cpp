#include "transforms/fold/generated.h"

#include <catch2/catch.hpp>

#include "support/test_graph.h"

using namespace bnorm;
using bnorm::test::GraphBuilder;

TEST_CASE("generated_by names the ConstantOfShape behind a constant, through Identity, and nothing else",
          "[fold][fold_generated]") {
  GraphBuilder g(13);
  g.initializer("shape", Tensor::from_f64(DType::int64, {2}, {3, 4}));
  g.initializer("stored", Tensor::from_f64(DType::float32, {2}, {1, 2}));
  g.node("ConstantOfShape", {"shape"}, {"filled"}, "fill");
  g.node("Identity", {"filled"}, {"copied"}, "id1");
  g.node("Identity", {"copied"}, {"copied2"}, "id2");
  g.node("Identity", {"stored"}, {"stored_copy"}, "id3");
  auto& c = g.node("Constant", {}, {"const"}, "k");
  auto* a = c.add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  a->add_floats(1.5f);
  const Model m = g.model();
  const GraphIndex index(m.proto);
  auto gen = [&](const std::string& name) {
    const auto k = index.constant(index.main(), name);
    REQUIRE(k);
    return generated_by(index, *k);
  };
  CHECK(gen("filled") == "ConstantOfShape 'fill'");
  CHECK(gen("copied2") == "ConstantOfShape 'fill'");
  CHECK(gen("stored").empty());
  CHECK(gen("stored_copy").empty());
  CHECK(gen("const").empty());
  const auto stored = index.constant(index.main(), "stored");
  const auto filled = index.constant(index.main(), "copied");
  CHECK(first_generated(index, {nullptr, &*stored, &*filled}) == "ConstantOfShape 'fill'");
  CHECK(first_generated(index, {&*stored}).empty());
}

TEST_CASE("size_text writes bytes in binary units with one decimal", "[fold][fold_generated]") {
  CHECK(size_text(0) == "0 B");
  CHECK(size_text(1023) == "1023 B");
  CHECK(size_text(1024) == "1.0 KB");
  CHECK(size_text(80 * 1024 + 512) == "80.5 KB");
  CHECK(size_text(uint64_t{94} << 20) == "94.0 MB");
  CHECK(size_text(uint64_t{3} << 30) == "3.0 GB");
}

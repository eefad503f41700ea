// bnorm upgrade with float8e8m0 (IR 12, opset 24): a model using it goes
// up and stays at 24 or later; below 24 it is refused like the other types
// no op has at the target (float8 below 19, int2 below 25), naming the node
// or the value, whether the type is declared or only inferred.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "support/test_graph.h"
#include "support/lower_support.h"
#include "support/upgrade_support.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

// x (float) -> Cast to float8e8m0 -> e -> Cast to float -> y; `declare_e`
// writes e's type in value_info.
Model round_trip_through_e8m0(int64_t opset, bool declare_e) {
  Model m = net(opset);
  input(m, "x", DType::float32, {4});
  auto& to_e = node(m, "Cast", {"x"}, {"e"}, "to_e8m0");
  set_attr(to_e, "to", int64_t{24});
  set_string(to_e, "round_mode", "nearest");
  set_attr(node(m, "Cast", {"e"}, {"y"}, "to_float"), "to", int64_t{1});
  add_output(g(m), "y", DType::float32, {4});
  if (declare_e) {
    auto* v = g(m).add_value_info();
    v->set_name("e");
    v->mutable_type()->mutable_tensor_type()->set_elem_type(24);
  }
  return m;
}

}  // namespace

TEST_CASE("a model using float8e8m0 is refused below opset 24, naming the type, and goes up unchanged",
          "[upgrade][e8m0]") {
  for (const bool declared : {true, false}) {
    INFO("e declared: " << declared);
    const Model m = round_trip_through_e8m0(24, declared);
    for (const int64_t to : {int64_t{23}, int64_t{19}}) {
      const std::string e = upgrade_error_of(m, to);
      INFO(e);
      CHECK(e.find("float8e8m0") != std::string::npos);
    }
    const Model up = converted(m, 28);
    CHECK(up.proto.ir_version() >= 12);
    CHECK(attr_of(first_node(up, "Cast"), "round_mode")->s() == "nearest");
  }
  // A float8e8m0 graph input: the declared type blocks the target, IR 12 named.
  Model in = net(25);
  input(in, "s", DType::float8e8m0, {2});
  node(in, "Identity", {"s"}, {"y"}, "id");
  add_output(g(in), "y", DType::float8e8m0, {2});
  const std::string e = upgrade_error_of(in, 23);
  CHECK(e.find("graph input 's' is tensor(float8e8m0), a type no op has before opset 24 (IR 12)") != std::string::npos);
}

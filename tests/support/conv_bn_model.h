// A small Conv + BatchNormalization model built in the tests (no file in
// testdata/), and helpers to change one thing in it: the base of the
// bad-input matrix and of the batch tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/cli.h"

namespace bnorm::test {

inline onnx::TensorProto floats(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  return t;
}

inline void declare(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
  v->set_name(name);
  v->mutable_type()->Clear();
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// x [1, 3, 4, 4] -> conv1 (3 -> 3, 3x3, pads 1, bias) -> c -> bn1 -> y, opset 13.
// Parameters: scale 's', bias 'B', mean 'm', var 'v'.
inline onnx::ModelProto conv_bn() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("bnorm-bad-input-test");
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* conv = g->add_node();
  conv->set_name("conv1");
  conv->set_op_type("Conv");
  for (const char* i : {"x", "w", "b"}) conv->add_input(i);
  conv->add_output("c");
  auto* ks = conv->add_attribute();
  ks->set_name("kernel_shape");
  ks->set_type(onnx::AttributeProto::INTS);
  ks->add_ints(3);
  ks->add_ints(3);
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  auto* bn = g->add_node();
  bn->set_name("bn1");
  bn->set_op_type("BatchNormalization");
  for (const char* i : {"c", "s", "B", "m", "v"}) bn->add_input(i);
  bn->add_output("y");
  std::vector<float> w(81);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) / 8.0f - 0.375f;
  *g->add_initializer() = floats("w", {3, 3, 3, 3}, w);
  *g->add_initializer() = floats("b", {3}, {0.125f, -0.25f, 0.5f});
  *g->add_initializer() = floats("s", {3}, {1.0f, 0.5f, 2.0f});
  *g->add_initializer() = floats("B", {3}, {0.0f, 0.25f, -0.5f});
  *g->add_initializer() = floats("m", {3}, {0.5f, -0.5f, 0.0f});
  *g->add_initializer() = floats("v", {3}, {1.0f, 0.25f, 4.0f});
  declare(g->add_input(), "x", {1, 3, 4, 4});
  declare(g->add_output(), "y", {1, 3, 4, 4});
  return m;
}

inline onnx::TensorProto& initializer(onnx::ModelProto& m, const std::string& name) {
  for (auto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == name) return t;
  throw std::runtime_error("no initializer " + name);
}

inline onnx::NodeProto& node(onnx::ModelProto& m, const std::string& name) {
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}

inline std::filesystem::path save(const TempDir& dir, const std::string& name, const onnx::ModelProto& m) {
  std::string bytes;
  REQUIRE(m.SerializeToString(&bytes));
  write_file(dir / name, bytes);
  return dir / name;
}

}  // namespace bnorm::test

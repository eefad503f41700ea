// Celu 12 <-> 28: float16, bfloat16 and double were added (float only before).
//
//   Celu-12: Y = Celu(X float)                      alpha
//   Celu-28: Y = Celu(X float16 | bfloat16 | float | double)
//
// Up: nothing changes. Down: float moves as it is; float16 computes in
// float between Casts, Y = Cast(Celu(Cast(X, float)), float16), as
// bfloat16 does (the bfloat16 pass, bf16_casts.cpp, has already cast it):
// bnorm's evaluator computes a float16 Celu in float and rounds once, so
// the bits are the same. double is refused: Celu-12 computes in float, and
// no older op gives Celu's expm1 in double. A node whose type is not known
// moves (the structural check then judges it). Formula: unchanged.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void up(NormSite&) {}

void down(NormSite& s) {
  const auto t = s.type_of(s.node.input(0));
  if (!t || *t == DType::float32) return;
  if (*t == DType::float64) {
    refuse(s, "a double Celu has no exact form below 28: Celu-12 computes in float, and no older op gives Celu's "
              "expm1 in double");
  }
  if (*t != DType::float16) return;  // bfloat16: cast by the bfloat16 pass before the steps run
  const std::string x = s.fresh(s.node.input(0) + "_as_float");
  set_cast_to(s.add_before("Cast", {s.node.input(0)}, {x}), s.target_opset, onnx::TensorProto::FLOAT);
  s.new_types[x] = DType::float32;
  s.node.set_input(0, x);
  const std::string y = s.node.output(0);
  const std::string inner = s.fresh(y + "_as_float");
  s.node.set_output(0, inner);
  s.new_types[inner] = DType::float32;
  set_cast_to(s.add_after("Cast", {inner}, {y}), s.target_opset, onnx::TensorProto::FLOAT16);
}

}  // namespace

const Step celu_28{"celu_28", "celu_28", up, down};

}  // namespace bnorm::steps

// Control flow, sequences and optionals: registration, plus Identity of
// non-tensor values and the Optional ops.
//
// Optional-15: `input` present -> an optional holding it; absent -> an
// empty optional of the attribute `type` (required then).
// OptionalHasElement-15: whether the optional input holds an element.
// OptionalHasElement-18: also true for a tensor or sequence, false when
// the input is absent.
// OptionalGetElement-15: the element (an empty optional is an error: the
// spec leaves it undefined, bnorm refuses it). OptionalGetElement-18: a
// tensor or sequence input is returned as it is.
// Identity-14 passes sequences, Identity-16 also optionals.
#include "core/error.h"
#include "model/attrs.h"
#include "eval/ops/control/ops.h"
#include "eval/ops/control/control.h"

namespace bnorm::eval {

Tensors op_optional(const OpContext& ctx) {
  if (const Value* v = ctx.value(0)) {
    if (v->kind == Value::Kind::optional) fail(ErrorKind::input, "input 'input' is {}; Optional wraps a tensor or sequence", v->describe());
    ctx.set_output(0, Value::some(*v));
    return Tensors(1);
  }
  const auto* type = find_attr(*ctx.node, "type");
  if (!type || !type->has_tp()) fail(ErrorKind::input, "an Optional without input needs the attribute 'type'");
  const auto& tp = type->tp();
  if (tp.has_tensor_type()) {
    ctx.set_output(0, Value::none(Value::Kind::tensor, static_cast<DType>(tp.tensor_type().elem_type())));
  } else if (tp.has_sequence_type() && tp.sequence_type().elem_type().has_tensor_type()) {
    const auto elem = static_cast<DType>(tp.sequence_type().elem_type().tensor_type().elem_type());
    ctx.set_output(0, Value::none(Value::Kind::sequence, elem));
  } else {
    fail(ErrorKind::unsupported, "an Optional of a type other than a tensor or a sequence of tensors");
  }
  return Tensors(1);
}

Tensors op_optional_has_element(const OpContext& ctx) {
  const Value* v = ctx.value(0);
  if (ctx.version < 18) {
    if (!v) fail(ErrorKind::input, "missing input 'input' (optional from OptionalHasElement-18 on)");
    if (v->kind != Value::Kind::optional) {
      fail(ErrorKind::input, "input 'input' is {}; OptionalHasElement-15 takes an optional", v->describe());
    }
  }
  Tensor out(DType::boolean, {});
  out.bytes[0] = v && (v->kind != Value::Kind::optional || v->has_element);
  return one_tensor(std::move(out));
}

Tensors op_optional_get_element(const OpContext& ctx) {
  const Value& v = value_input(ctx, 0, "input");
  if (v.kind != Value::Kind::optional && ctx.version < 18) {
    fail(ErrorKind::input, "input 'input' is {}; OptionalGetElement-15 takes an optional", v.describe());
  }
  if (v.kind == Value::Kind::optional && !v.has_element) {
    fail(ErrorKind::input, "input 'input' is an empty optional: it has no element to get");
  }
  Value e = v.unwrapped();
  if (e.is_tensor()) return {std::move(e.tensor)};
  ctx.set_output(0, std::move(e));
  return Tensors(1);
}

Value identity_value(const OpContext& ctx) {
  const Value& v = value_input(ctx, 0, "input");
  const bool optional = v.kind == Value::Kind::optional;
  if (ctx.version < 14 || (optional && ctx.version < 16)) {
    fail(ErrorKind::input, "input 'input' is {}; Identity-{} takes {}", v.describe(), ctx.version,
         ctx.version < 14 ? "tensors" : "tensors or sequences");
  }
  return v;
}

bool takes_values(const std::string& op) {
  static const char* const kOps[] = {"Identity",        "Loop",           "SequenceMap",     "SequenceAt",
                                     "SequenceErase",   "SequenceInsert", "SequenceLength",  "ConcatFromSequence",
                                     "Optional",        "OptionalHasElement", "OptionalGetElement"};
  for (const char* o : kOps) {
    if (op == o) return true;
  }
  return false;
}

}  // namespace bnorm::eval

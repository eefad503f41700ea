// Comparisons and logic: Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
// Not, And, Or, Xor, Where.
//
// Contract:
//   comparisons  two inputs of one numeric type (bool too for Equal),
//                numpy broadcasting (before 7: the `broadcast` and `axis`
//                attributes, as Add); the output is bool. Values compare in
//                their own type (float16 and bfloat16 as float, exactly).
//   And, Or, Xor bool inputs, broadcasting as the comparisons; Not: bool.
//   Where        cond ? X : Y elementwise, the three broadcast together;
//                X and Y of any one type.
#include <cstring>

#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/ops/elementwise/broadcast.h"

namespace bnorm::eval {

namespace {

enum class Cmp { eq, lt, gt, le, ge, land, lor, lxor };

template <typename T>
uint8_t compare(Cmp op, T x, T y) {
  switch (op) {
    case Cmp::eq: return x == y;
    case Cmp::lt: return x < y;
    case Cmp::gt: return x > y;
    case Cmp::le: return x <= y;
    case Cmp::ge: return x >= y;
    case Cmp::land: return (x != 0) && (y != 0);
    case Cmp::lor: return (x != 0) || (y != 0);
    case Cmp::lxor: return (x != 0) != (y != 0);
  }
  return 0;
}

Tensors binary_bool(const OpContext& ctx, Cmp op) {
  const Tensor& a = ctx.required(0, "A");
  const Tensor& b = ctx.required(1, "B");
  if (a.dtype != b.dtype) {
    fail(ErrorKind::input, "inputs have types {} and {}, which must be equal", dtype_name(a.dtype), dtype_name(b.dtype));
  }
  const bool logical = op == Cmp::land || op == Cmp::lor || op == Cmp::lxor;
  if (logical && a.dtype != DType::boolean) fail(ErrorKind::input, "inputs must be bool, not {}", dtype_name(a.dtype));
  const std::vector<int64_t> db = legacy_b_dims(ctx, a, b);
  Tensors out(1);
  out[0] = Tensor(DType::boolean, broadcast_shapes(a.dims, db));
  with_numeric_type(a.dtype, "input 'A'", [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> va = load_values<T>(a), vb = load_values<T>(b);
    broadcast_apply(va.data(), a.dims, vb.data(), db, out[0].data<uint8_t>(), out[0].dims,
                    [op](T x, T y) { return compare(op, x, y); });
    return 0;
  });
  return out;
}

}  // namespace

Tensors op_equal(const OpContext& ctx) { return binary_bool(ctx, Cmp::eq); }
Tensors op_less(const OpContext& ctx) { return binary_bool(ctx, Cmp::lt); }
Tensors op_greater(const OpContext& ctx) { return binary_bool(ctx, Cmp::gt); }
Tensors op_less_or_equal(const OpContext& ctx) { return binary_bool(ctx, Cmp::le); }
Tensors op_greater_or_equal(const OpContext& ctx) { return binary_bool(ctx, Cmp::ge); }
Tensors op_and(const OpContext& ctx) { return binary_bool(ctx, Cmp::land); }
Tensors op_or(const OpContext& ctx) { return binary_bool(ctx, Cmp::lor); }
Tensors op_xor(const OpContext& ctx) { return binary_bool(ctx, Cmp::lxor); }

Tensors op_not(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dtype != DType::boolean) fail(ErrorKind::input, "input 'X' must be bool, not {}", dtype_name(x.dtype));
  Tensors out(1);
  out[0] = Tensor(DType::boolean, x.dims);
  for (int64_t i = 0; i < x.numel(); ++i) out[0].data<uint8_t>()[i] = x.data<uint8_t>()[i] == 0;
  return out;
}

Tensors op_where(const OpContext& ctx) {
  const Tensor& c = ctx.required(0, "condition");
  const Tensor& x = ctx.required(1, "X");
  const Tensor& y = ctx.required(2, "Y");
  if (c.dtype != DType::boolean) fail(ErrorKind::input, "input 'condition' must be bool, not {}", dtype_name(c.dtype));
  if (x.dtype != y.dtype) {
    fail(ErrorKind::input, "inputs 'X' and 'Y' have types {} and {}, which must be equal", dtype_name(x.dtype),
         dtype_name(y.dtype));
  }
  const std::vector<int64_t> dims = broadcast_shapes(broadcast_shapes(c.dims, x.dims), y.dims);
  const std::vector<int64_t> oc = broadcast_offsets(c.dims, dims), ox = broadcast_offsets(x.dims, dims),
                             oy = broadcast_offsets(y.dims, dims);
  Tensors out(1);
  out[0] = Tensor(x.dtype, dims);
  const size_t es = dtype_size(x.dtype);
  const uint8_t* cond = c.data<uint8_t>();
  for (size_t i = 0; i < oc.size(); ++i) {
    const uint8_t* src = cond[oc[i]] ? x.bytes.data() + ox[i] * es : y.bytes.data() + oy[i] * es;
    std::memcpy(out[0].bytes.data() + i * es, src, es);
  }
  return out;
}

}  // namespace bnorm::eval

// BitCast (26): the input's bits read as type `to`.
//
// Contract: `to` (required) names a type of X's bit width; Y has X's shape
// and, element for element, X's bit pattern (little endian, as the text
// says, which is how bnorm holds every type). Widths: 4 bits for int4,
// uint4 and float4e2m1, 2 for int2 and uint2, otherwise the element's bytes
// times 8 (bool is 8). A `to` of another width is Error(input); a `to` that
// is no TensorProto type, or string, is Error(input); types bnorm does not
// hold (complex64, complex128) are Error(unsupported), by name.
// Decisions: the sub-byte types are held unpacked (model/tensor.h): their
// low bits are what is reinterpreted (int4 -1 is uint4 15, int2 -1 uint2
// 3). A byte other than 0 and 1 read as bool is true (1), as numpy's view
// of it reads; such a value cast back gives 1, not the byte.
#include <cstring>

#include "core/error.h"
#include "eval/ops/elementwise/ops.h"
#include "eval/run/op.h"
#include "model/attrs.h"

namespace bnorm::eval {

namespace {

// The bit width of type `t`, or 0 when bnorm does not hold it.
int bit_width(DType t) {
  if (const int bits = packed_bits(t)) return bits;
  return static_cast<int>(dtype_size(t)) * 8;
}

std::string type_label(int64_t code) {
  switch (code) {
    case 14: return "complex64";
    case 15: return "complex128";
    default: return dtype_name(static_cast<DType>(code));
  }
}

}  // namespace

Tensors op_bit_cast(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  if (!find_attr(*ctx.node, "to")) fail(ErrorKind::input, "attribute 'to' is missing");
  const int64_t code = attr_int(*ctx.node, "to", 0);
  if (code < 1 || code > 26 || code == static_cast<int64_t>(DType::string)) {
    fail(ErrorKind::input, "'to' is {}, not a TensorProto data type BitCast takes", code);
  }
  const auto to = static_cast<DType>(code);
  const int to_bits = bit_width(to);
  if (to_bits == 0) fail(ErrorKind::unsupported, "BitCast to {} is not supported", type_label(code));
  const int from_bits = bit_width(x.dtype);
  if (from_bits != to_bits) {
    fail(ErrorKind::input, "BitCast from {} ({} bits) to {} ({} bits): the widths differ", dtype_name(x.dtype),
         from_bits, dtype_name(to), to_bits);
  }
  Tensor y(to, x.dims);
  const auto n = static_cast<size_t>(x.numel());
  if (to_bits < 8) {
    const auto mask = static_cast<uint8_t>((1u << to_bits) - 1), sign = static_cast<uint8_t>(1u << (to_bits - 1));
    const bool is_signed = to == DType::int4 || to == DType::int2;
    const auto* src = x.bytes.data();
    auto* dst = y.bytes.data();
    for (size_t i = 0; i < n; ++i) {
      const auto low = static_cast<uint8_t>(src[i] & mask);
      dst[i] = is_signed && (low & sign) ? static_cast<uint8_t>(low | ~mask) : low;
    }
  } else if (to == DType::boolean) {
    const auto* src = x.bytes.data();
    auto* dst = y.bytes.data();
    for (size_t i = 0; i < n; ++i) dst[i] = src[i] != 0;
  } else if (n) {
    std::memcpy(y.bytes.data(), x.bytes.data(), x.bytes.size());
  }
  return one_tensor(std::move(y));
}

}  // namespace bnorm::eval

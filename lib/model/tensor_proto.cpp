#include "model/tensor_proto.h"

#include <fmt/format.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "model/buffer_pool.h"
#include "model/deferred.h"
#include "model/external_data.h"

namespace bnorm {

namespace {

std::string label(const std::string& name) {
  return name.empty() ? std::string("unnamed tensor") : fmt::format("tensor '{}'", name);
}

// The typed field ONNX uses for each type (raw_data is always allowed too).
const char* typed_field_for(DType t) {
  switch (t) {
    case DType::float32: return "float_data";
    case DType::float64: return "double_data";
    case DType::int64: return "int64_data";
    case DType::uint32:
    case DType::uint64: return "uint64_data";
    default: return "int32_data";
  }
}

struct Field {
  const char* name;
  int size;
};

// The typed fields of `p` that hold values.
std::vector<Field> nonempty_typed_fields(const onnx::TensorProto& p) {
  std::vector<Field> out;
  if (p.float_data_size() > 0) out.push_back({"float_data", p.float_data_size()});
  if (p.double_data_size() > 0) out.push_back({"double_data", p.double_data_size()});
  if (p.int32_data_size() > 0) out.push_back({"int32_data", p.int32_data_size()});
  if (p.int64_data_size() > 0) out.push_back({"int64_data", p.int64_data_size()});
  if (p.uint64_data_size() > 0) out.push_back({"uint64_data", p.uint64_data_size()});
  if (p.string_data_size() > 0) out.push_back({"string_data", p.string_data_size()});
  return out;
}

// Range of the values int32_data may carry for `t`. float16 and bfloat16
// carry 16-bit patterns, normally as uint16; int16 (sign-extended) values
// are accepted too, as some writers produce them.
void int32_range(DType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DType::int8: *lo = -128; *hi = 127; return;
    case DType::uint8: *lo = 0; *hi = 255; return;
    case DType::int16: *lo = -32768; *hi = 32767; return;
    case DType::uint16: *lo = 0; *hi = 65535; return;
    case DType::boolean: *lo = 0; *hi = 1; return;
    case DType::float16:
    case DType::bfloat16: *lo = -32768; *hi = 65535; return;
    // One bit pattern per value; for the 4-bit (2-bit) types, a byte of two (four) packed elements.
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float8e8m0:
    case DType::int4:
    case DType::uint4:
    case DType::float4e2m1:
    case DType::int2:
    case DType::uint2: *lo = 0; *hi = 255; return;
    default: *lo = INT32_MIN; *hi = INT32_MAX; return;
  }
}

// Copies integer values into elements of `size` bytes: the low bytes of
// their two's complement form, after checking they lie in [lo, hi].
template <typename Int>
void copy_integers(const google::protobuf::RepeatedField<Int>& values, int64_t lo, uint64_t hi,
                   size_t size, uint8_t* out, const onnx::TensorProto& p) {
  for (int i = 0; i < values.size(); ++i) {
    const Int v = values.Get(i);
    const bool negative = std::is_signed<Int>::value && static_cast<int64_t>(v) < 0;
    const bool in_range = negative ? static_cast<int64_t>(v) >= lo : static_cast<uint64_t>(v) <= hi;
    if (!in_range) {
      fail(ErrorKind::input, "{}: value {} at index {} is out of range for {}", label(p.name()), v, i,
           dtype_name(static_cast<DType>(p.data_type())));
    }
    const uint64_t bits = static_cast<uint64_t>(v);
    std::memcpy(out + static_cast<size_t>(i) * size, &bits, size);  // little-endian low bytes
  }
}

void decode_typed(const onnx::TensorProto& p, DType t, Tensor* out) {
  const size_t size = dtype_size(t);
  uint8_t* dst = out->bytes.data();
  switch (t) {
    case DType::float32:
      if (!out->bytes.empty()) std::memcpy(dst, p.float_data().data(), out->bytes.size());
      return;
    case DType::float64:
      if (!out->bytes.empty()) std::memcpy(dst, p.double_data().data(), out->bytes.size());
      return;
    case DType::int64:
      if (!out->bytes.empty()) std::memcpy(dst, p.int64_data().data(), out->bytes.size());
      return;
    case DType::uint32: copy_integers(p.uint64_data(), 0, UINT32_MAX, size, dst, p); return;
    case DType::uint64: copy_integers(p.uint64_data(), 0, UINT64_MAX, size, dst, p); return;
    default: break;
  }
  int64_t lo = 0, hi = 0;
  int32_range(t, &lo, &hi);
  copy_integers(p.int32_data(), lo, static_cast<uint64_t>(hi), size, dst, p);
}

// Refuses bool bytes other than 0 and 1, whatever storage they came from.
void check_bools(const Tensor& t) {
  for (size_t i = 0; i < t.bytes.size(); ++i) {
    if (t.bytes[i] > 1) {
      fail(ErrorKind::input, "{}: bool value {} at index {} is not 0 or 1", label(t.name), int{t.bytes[i]}, i);
    }
  }
}

// ONNX's packed sub-byte form (4-bit types two per byte, 2-bit types four)
// -> one element per byte (tensor.h): the first element of each byte in its
// lowest bits; int4 and int2 are sign-extended. The unused high bits of the
// last byte are padding and are ignored.
std::vector<uint8_t> unpack_bits(const std::vector<uint8_t>& packed, DType t, int64_t numel) {
  const int bits = packed_bits(t), per_byte = 8 / bits;
  const auto mask = static_cast<uint8_t>((1u << bits) - 1), sign = static_cast<uint8_t>(1u << (bits - 1));
  const bool is_signed = t == DType::int4 || t == DType::int2;
  std::vector<uint8_t> out(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    uint8_t v = (packed[static_cast<size_t>(i / per_byte)] >> ((i % per_byte) * bits)) & mask;
    if (is_signed && (v & sign)) v |= static_cast<uint8_t>(~mask);
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

std::string pack_bits(const Tensor& t) {
  const int bits = packed_bits(t.dtype), per_byte = 8 / bits;
  const auto mask = static_cast<uint8_t>((1u << bits) - 1);
  const bool is_signed = t.dtype == DType::int4 || t.dtype == DType::int2;
  const size_t n = t.bytes.size();
  std::string out((n + per_byte - 1) / per_byte, '\0');
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = t.bytes[i];
    // In range: b itself fits the mask, or (signed) it is a sign-extended negative value.
    const bool ok = b <= (is_signed ? mask >> 1 : mask) || (is_signed && b >= static_cast<uint8_t>(~(mask >> 1)));
    if (!ok) {
      fail(ErrorKind::input, "{}: byte {} at index {} is not a {} value", label(t.name), int{b}, i, dtype_name(t.dtype));
    }
    out[i / per_byte] =
        static_cast<char>(static_cast<uint8_t>(out[i / per_byte]) | ((b & mask) << ((i % per_byte) * bits)));
  }
  return out;
}

}  // namespace

bool is_external(const onnx::TensorProto& p) {
  return p.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
}

namespace {

enum class Storage { none, raw, typed, external, deferred };

struct Layout {
  DType type = DType::undefined;
  std::vector<int64_t> dims;
  int64_t numel = 0;
  uint64_t bytes = 0;  // numel * element size; for the 4-bit types, packed: (numel + 1) / 2
  Storage storage = Storage::none;
  std::string need;    // "dims [3] of float need"
};

// Checks the dims of `p` and that its storage holds exactly what they need
// (for external data: the location, the file and the range, without
// reading). Types without a fixed size only have their dims and their
// single storage checked.
Layout check_layout(const onnx::TensorProto& p, const std::filesystem::path& base_dir) {
  Layout l;
  l.type = static_cast<DType>(p.data_type());
  const size_t size = dtype_size(l.type);
  if (p.has_segment()) fail(ErrorKind::unsupported, "{}: segmented tensors are not supported", label(p.name()));

  l.dims.assign(p.dims().begin(), p.dims().end());
  try {
    l.numel = checked_numel(l.dims, size == 0 ? INT64_MAX : INT64_MAX / static_cast<int64_t>(size));
  } catch (const Error& e) {
    fail(ErrorKind::input, "{}: {}", label(p.name()), e.bare_message());
  }
  const int bits = packed_bits(l.type);
  const uint64_t per_byte = bits ? 8 / bits : 1;  // a ceiling division, which cannot overflow for any numel
  l.bytes = bits ? (static_cast<uint64_t>(l.numel) + per_byte - 1) / per_byte : static_cast<uint64_t>(l.numel) * size;
  l.need = fmt::format("dims {} of {} need", shape_str(l.dims), dtype_name(l.type));

  const std::vector<Field> typed = nonempty_typed_fields(p);
  const bool raw = p.has_raw_data() || !p.raw_data().empty();
  if (is_external(p) && (raw || !typed.empty())) {
    fail(ErrorKind::input, "{}: has external data and also {}", label(p.name()), raw ? "raw_data" : typed[0].name);
  }
  if (raw && !typed.empty()) fail(ErrorKind::input, "{}: has both raw_data and {}", label(p.name()), typed[0].name);
  if (typed.size() > 1) {
    fail(ErrorKind::input, "{}: has both {} and {}", label(p.name()), typed[0].name, typed[1].name);
  }
  if (is_deferred(p)) {
    l.storage = Storage::deferred;
    const int64_t length = deferred_ref(p).length;
    if (size != 0 && static_cast<uint64_t>(length) != l.bytes) {
      fail(ErrorKind::input, "{}: raw_data has {} bytes, {} {}", label(p.name()), length, l.need, l.bytes);
    }
  } else if (is_external(p)) {
    l.storage = Storage::external;
    if (base_dir.empty()) {
      fail(ErrorKind::input, "{}: has external data but the model's directory is unknown", label(p.name()));
    }
    check_external(base_dir, external_ref(p), size == 0 ? -1 : static_cast<int64_t>(l.bytes), p.name());
  } else if (raw) {
    l.storage = Storage::raw;
    if (size != 0 && p.raw_data().size() != l.bytes) {
      fail(ErrorKind::input, "{}: raw_data has {} bytes, {} {}", label(p.name()), p.raw_data().size(), l.need,
           l.bytes);
    }
  } else if (!typed.empty()) {
    l.storage = Storage::typed;
    if (size == 0) return l;
    const char* want = typed_field_for(l.type);
    if (std::strcmp(typed[0].name, want) != 0) {
      fail(ErrorKind::input, "{}: {} values must be in {} or raw_data, found {}", label(p.name()),
           dtype_name(l.type), want, typed[0].name);
    }
    const int64_t values = bits ? static_cast<int64_t>(l.bytes) : l.numel;  // a packed byte per int32
    if (typed[0].size != values) {
      fail(ErrorKind::input, "{}: {} has {} values, {} {}", label(p.name()), want, typed[0].size, l.need, values);
    }
  } else if (l.numel > 0 && size != 0) {
    fail(ErrorKind::input, "{}: has no data, {} {} values", label(p.name()), l.need, l.numel);
  }
  return l;
}

}  // namespace

void check_tensor_proto(const onnx::TensorProto& p, const std::filesystem::path& base_dir) {
  check_layout(p, base_dir);
}

Tensor decode_tensor(const onnx::TensorProto& p, const std::filesystem::path& base_dir) {
  const DType t = static_cast<DType>(p.data_type());
  if (dtype_size(t) == 0) fail(ErrorKind::input, "{}: type {} is not supported", label(p.name()), dtype_name(t));
  const Layout l = check_layout(p, base_dir);

  Tensor out;
  out.name = p.name();
  out.dtype = t;
  out.dims = l.dims;
  if (l.storage == Storage::deferred) {
    out.bytes = read_deferred(p);
  } else if (l.storage == Storage::external) {
    out.bytes = read_external(base_dir, external_ref(p), static_cast<int64_t>(l.bytes), p.name());
    if (out.bytes.size() != l.bytes) {
      fail(ErrorKind::input, "{}: external data has {} bytes, {} {}", label(p.name()), out.bytes.size(), l.need,
           l.bytes);
    }
  } else if (l.storage == Storage::raw) {
    out.bytes = storage_for_overwrite(p.raw_data().size());
    std::copy(p.raw_data().begin(), p.raw_data().end(), out.bytes.begin());
  } else if (l.storage == Storage::typed) {
    out.bytes.resize(l.bytes);
    decode_typed(p, t, &out);
  }
  if (t == DType::boolean) check_bools(out);
  if (packed_bits(t)) out.bytes = unpack_bits(out.bytes, t, l.numel);
  return out;
}

void encode_tensor(const Tensor& t, onnx::TensorProto* out) {
  const size_t size = dtype_size(t.dtype);
  if (size == 0) fail(ErrorKind::input, "{}: type {} cannot be encoded", label(t.name), dtype_name(t.dtype));
  int64_t numel = 0;
  try {
    numel = checked_numel(t.dims, INT64_MAX / static_cast<int64_t>(size));
  } catch (const Error& e) {
    fail(ErrorKind::input, "{}: {}", label(t.name), e.bare_message());
  }
  if (t.bytes.size() != static_cast<uint64_t>(numel) * size) {
    fail(ErrorKind::input, "{}: holds {} bytes, dims {} of {} need {}", label(t.name), t.bytes.size(),
         shape_str(t.dims), dtype_name(t.dtype), static_cast<uint64_t>(numel) * size);
  }
  // An unnamed tensor keeps the proto's name, so data can be replaced in place.
  if (!t.name.empty()) out->set_name(t.name);
  out->set_data_type(static_cast<int32_t>(t.dtype));
  out->clear_dims();
  for (int64_t d : t.dims) out->add_dims(d);
  out->clear_float_data();
  out->clear_double_data();
  out->clear_int32_data();
  out->clear_int64_data();
  out->clear_uint64_data();
  out->clear_string_data();
  out->clear_segment();
  out->clear_external_data();
  out->clear_data_location();  // reads as DEFAULT and is not serialized, as ONNX writes it
  if (packed_bits(t.dtype)) *out->mutable_raw_data() = pack_bits(t);
  else out->mutable_raw_data()->assign(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
}

onnx::TensorProto to_proto(const Tensor& t) {
  onnx::TensorProto p;
  encode_tensor(t, &p);
  return p;
}

void add_tensor_input(onnx::GraphProto& g, const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
  auto* in = g.add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

void add_tensor_input(onnx::GraphProto& g, const std::string& name, int32_t elem_type,
                      const google::protobuf::RepeatedField<int64_t>& dims) {
  add_tensor_input(g, name, elem_type, std::vector<int64_t>(dims.begin(), dims.end()));
}

}  // namespace bnorm

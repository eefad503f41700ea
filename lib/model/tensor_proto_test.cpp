#include "model/tensor_proto.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "support/error_of.h"

using bnorm::decode_tensor;
using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::Tensor;
using bnorm::test::error_of;
using Bytes = std::vector<uint8_t>;
namespace fs = std::filesystem;

namespace {

onnx::TensorProto proto(const std::string& name, DType t, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(static_cast<int32_t>(t));
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

onnx::TensorProto raw_proto(const std::string& name, DType t, std::vector<int64_t> dims, const Bytes& raw) {
  onnx::TensorProto p = proto(name, t, std::move(dims));
  p.set_raw_data(std::string(raw.begin(), raw.end()));
  return p;
}

// A fresh directory, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("bnorm_tensor_proto_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("every type decodes from little-endian raw_data") {
  struct Case {
    DType t;
    Bytes raw;
    std::vector<double> values;
  };
  const Case cases[] = {
      {DType::float32, {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0}, {1.0, -2.5}},
      {DType::float64, {0, 0, 0, 0, 0, 0, 0xE0, 0x3F, 0, 0, 0, 0, 0, 0, 0xF0, 0xFF}, {0.5, -kInf}},
      {DType::float16, {0x00, 0x3C, 0xFF, 0x7B}, {1.0, 65504.0}},
      {DType::bfloat16, {0x80, 0x3F, 0xA0, 0xC0}, {1.0, -5.0}},
      {DType::int8, {0x80, 0x7F}, {-128, 127}},
      {DType::uint8, {0x00, 0xFF}, {0, 255}},
      {DType::int16, {0xFE, 0xFF, 0x2C, 0x01}, {-2, 300}},
      {DType::uint16, {0xFF, 0xFF, 0x01, 0x00}, {65535, 1}},
      {DType::int32, {0xFF, 0xFF, 0xFF, 0xFF, 0x04, 0x03, 0x02, 0x01}, {-1, 0x01020304}},
      {DType::uint32, {0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00}, {4294967295.0, 0}},
      {DType::int64, {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0, 0, 0, 0, 0}, {-2, 7}},
      {DType::uint64, {0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0}, {std::ldexp(1.0, 63), 1}},
      {DType::boolean, {0x01, 0x00}, {1, 0}},
  };
  for (const auto& c : cases) {
    INFO(bnorm::dtype_name(c.t));
    const Tensor t = decode_tensor(raw_proto("x", c.t, {2}, c.raw));
    CHECK(t.name == "x");
    CHECK(t.dtype == c.t);
    CHECK(t.dims == std::vector<int64_t>{2});
    CHECK(t.bytes == c.raw);
    CHECK(t.to_f64() == c.values);
  }
}

TEST_CASE("every type decodes from its typed field") {
  struct Case {
    DType t;
    onnx::TensorProto p;
    Bytes bytes;
  };
  std::vector<Case> cases;
  auto add = [&](DType t, size_t n, auto fill, Bytes bytes) {
    onnx::TensorProto p = proto("x", t, {static_cast<int64_t>(n)});
    fill(p);
    cases.push_back({t, p, std::move(bytes)});
  };
  add(DType::float32, 2, [](auto& p) { p.add_float_data(1.0f); p.add_float_data(-2.5f); },
      {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0});
  add(DType::float64, 1, [](auto& p) { p.add_double_data(0.5); }, {0, 0, 0, 0, 0, 0, 0xE0, 0x3F});
  add(DType::int32, 2, [](auto& p) { p.add_int32_data(-1); p.add_int32_data(0x01020304); },
      {0xFF, 0xFF, 0xFF, 0xFF, 0x04, 0x03, 0x02, 0x01});
  add(DType::int16, 2, [](auto& p) { p.add_int32_data(-2); p.add_int32_data(300); }, {0xFE, 0xFF, 0x2C, 0x01});
  add(DType::int8, 2, [](auto& p) { p.add_int32_data(-128); p.add_int32_data(127); }, {0x80, 0x7F});
  add(DType::uint16, 1, [](auto& p) { p.add_int32_data(65535); }, {0xFF, 0xFF});
  add(DType::uint8, 2, [](auto& p) { p.add_int32_data(255); p.add_int32_data(0); }, {0xFF, 0x00});
  add(DType::boolean, 2, [](auto& p) { p.add_int32_data(1); p.add_int32_data(0); }, {0x01, 0x00});
  add(DType::float16, 3,
      [](auto& p) {
        for (int32_t bits : {0x3C00, 0x7BFF, 0x0001}) p.add_int32_data(bits);
      },
      {0x00, 0x3C, 0xFF, 0x7B, 0x01, 0x00});
  add(DType::bfloat16, 1, [](auto& p) { p.add_int32_data(0x3F80); }, {0x80, 0x3F});
  add(DType::int64, 1, [](auto& p) { p.add_int64_data(-2); }, {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  add(DType::uint32, 1, [](auto& p) { p.add_uint64_data(4294967295u); }, {0xFF, 0xFF, 0xFF, 0xFF});
  add(DType::uint64, 1, [](auto& p) { p.add_uint64_data(UINT64_MAX); }, Bytes(8, 0xFF));
  for (const auto& c : cases) {
    INFO(bnorm::dtype_name(c.t));
    const Tensor t = decode_tensor(c.p);
    CHECK(t.dtype == c.t);
    CHECK(t.bytes == c.bytes);
  }
}

TEST_CASE("float16 and bfloat16 from int32_data carry exact bit patterns") {
  onnx::TensorProto h = proto("h", DType::float16, {4});
  for (int32_t bits : {0x3C00, 0x7BFF, 0x0001, 0x8000}) h.add_int32_data(bits);
  const auto hv = decode_tensor(h).to_f64();
  CHECK(hv[0] == 1.0);
  CHECK(hv[1] == 65504.0);
  CHECK(hv[2] == std::ldexp(1.0, -24));
  CHECK((hv[3] == 0.0 && std::signbit(hv[3])));

  // Some writers store the pattern sign-extended, as int16: same bits.
  onnx::TensorProto s = proto("s", DType::float16, {1});
  s.add_int32_data(-0x4000);  // 0xC000 = -2
  CHECK(decode_tensor(s).to_f64() == std::vector<double>{-2.0});

  onnx::TensorProto b = proto("b", DType::bfloat16, {2});
  b.add_int32_data(0x3F80);
  b.add_int32_data(0xC0A0);
  CHECK(decode_tensor(b).to_f64() == std::vector<double>{1.0, -5.0});
}

TEST_CASE("scalars have dims [] and one element") {
  const Tensor t = decode_tensor(raw_proto("s", DType::float32, {}, {0x00, 0x00, 0x40, 0x40}));
  CHECK(t.dims.empty());
  CHECK(t.numel() == 1);
  CHECK(t.to_f64() == std::vector<double>{3.0});

  onnx::TensorProto p = proto("s", DType::int64, {});
  p.add_int64_data(5);
  CHECK(decode_tensor(p).to_f64() == std::vector<double>{5});
}

TEST_CASE("raw_data of the wrong length is refused, naming the tensor and both sizes") {
  const auto e = error_of([] { decode_tensor(raw_proto("W", DType::float32, {2, 3}, Bytes(12))); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.bare_message() == "tensor 'W': raw_data has 12 bytes, dims [2, 3] of float need 24");
}

TEST_CASE("a typed field with the wrong number of values is refused") {
  onnx::TensorProto p = proto("b", DType::int8, {2, 3});
  for (int i = 0; i < 5; ++i) p.add_int32_data(i);
  const auto e = error_of([&] { decode_tensor(p); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.bare_message() == "tensor 'b': int32_data has 5 values, dims [2, 3] of int8 need 6");
}

TEST_CASE("data in a field that does not belong to the type, or in two fields, is refused") {
  onnx::TensorProto wrong = proto("w", DType::float32, {1});
  wrong.add_int64_data(1);
  auto e = error_of([&] { decode_tensor(wrong); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'w'") && Catch::Contains("int64_data") &&
                              Catch::Contains("float_data"));

  onnx::TensorProto both = raw_proto("both", DType::float32, {1}, {0, 0, 0x80, 0x3F});
  both.add_float_data(1.0f);
  e = error_of([&] { decode_tensor(both); });
  CHECK_THAT(e.message(), Catch::Contains("raw_data") && Catch::Contains("float_data"));
}

TEST_CASE("typed values out of range for the type are refused") {
  auto refused = [](DType t, auto fill) {
    onnx::TensorProto p = proto("r", t, {1});
    fill(p);
    const auto e = error_of([&] { decode_tensor(p); });
    CHECK(e.kind() == ErrorKind::input);
    CHECK_THAT(e.message(), Catch::Contains("tensor 'r'") && Catch::Contains(bnorm::dtype_name(t)));
  };
  refused(DType::uint8, [](auto& p) { p.add_int32_data(256); });
  refused(DType::int8, [](auto& p) { p.add_int32_data(-129); });
  refused(DType::uint16, [](auto& p) { p.add_int32_data(-1); });
  refused(DType::int16, [](auto& p) { p.add_int32_data(40000); });
  refused(DType::float16, [](auto& p) { p.add_int32_data(0x10000); });
  refused(DType::boolean, [](auto& p) { p.add_int32_data(2); });
  refused(DType::uint32, [](auto& p) { p.add_uint64_data(uint64_t{1} << 32); });
  // Bool bytes other than 0 and 1 are refused in raw_data too.
  CHECK_THROWS_AS(decode_tensor(raw_proto("r", DType::boolean, {1}, {2})), Error);
}

TEST_CASE("a tensor without data is fine with no elements and an error otherwise") {
  const Tensor empty = decode_tensor(proto("e", DType::float32, {0, 4}));
  CHECK(empty.dims == std::vector<int64_t>{0, 4});
  CHECK(empty.bytes.empty());
  CHECK(decode_tensor(raw_proto("e", DType::float16, {3, 0}, {})).bytes.empty());

  const auto e = error_of([] { decode_tensor(proto("n", DType::float32, {2})); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'n'") && Catch::Contains("no data"));
}

TEST_CASE("negative and overflowing dims are refused before any allocation") {
  auto e = error_of([] { decode_tensor(raw_proto("neg", DType::float32, {2, -3}, Bytes(4))); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'neg'") && Catch::Contains("negative"));

  e = error_of([] { decode_tensor(raw_proto("ovf", DType::float32, {int64_t{1} << 40, int64_t{1} << 40}, {})); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'ovf'") && Catch::Contains("overflow"));

  // The element count fits int64, the byte count does not.
  e = error_of([] { decode_tensor(raw_proto("big", DType::float32, {int64_t{1} << 62}, Bytes(4))); });
  CHECK(e.kind() == ErrorKind::input);

  // 10^12 claimed elements with 4 bytes of data fail on the size check, at once.
  e = error_of([] { decode_tensor(raw_proto("huge", DType::float32, {1000000000000}, Bytes(4))); });
  CHECK(e.bare_message() == "tensor 'huge': raw_data has 4 bytes, dims [1000000000000] of float need 4000000000000");
  onnx::TensorProto typed = proto("huge", DType::float32, {1000000000000});
  typed.add_float_data(1.0f);
  e = error_of([&] { decode_tensor(typed); });
  CHECK_THAT(e.message(), Catch::Contains("float_data has 1 values"));
}

TEST_CASE("string, complex and undefined tensors are refused") {
  onnx::TensorProto s = proto("s", DType::string, {1});
  s.add_string_data("hello");
  auto e = error_of([&] { decode_tensor(s); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 's'") && Catch::Contains("string"));

  onnx::TensorProto c = proto("c", static_cast<DType>(onnx::TensorProto_DataType_COMPLEX64), {1});
  c.add_float_data(1.0f);
  c.add_float_data(2.0f);
  CHECK_THROWS_AS(decode_tensor(c), Error);
  CHECK_THROWS_AS(decode_tensor(raw_proto("u", DType::undefined, {1}, {0})), Error);
}

TEST_CASE("encode writes canonical raw data that decodes to the same tensor") {
  const DType types[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int8,
                         DType::uint8,   DType::int16,   DType::uint16,  DType::int32,    DType::uint32,
                         DType::int64,   DType::uint64,  DType::boolean};
  for (DType type : types) {
    INFO(bnorm::dtype_name(type));
    Tensor t(type, {2, 3}, "t");
    for (size_t i = 0; i < t.bytes.size(); ++i) {
      t.bytes[i] = static_cast<uint8_t>(type == DType::boolean ? i % 2 : i * 37);
    }
    const onnx::TensorProto p = bnorm::to_proto(t);
    CHECK(p.name() == "t");
    CHECK(p.data_type() == static_cast<int32_t>(type));
    CHECK(std::vector<int64_t>(p.dims().begin(), p.dims().end()) == t.dims);
    CHECK(p.raw_data() == std::string(t.bytes.begin(), t.bytes.end()));
    const Tensor back = decode_tensor(p);
    CHECK(back.name == t.name);
    CHECK(back.dtype == t.dtype);
    CHECK(back.dims == t.dims);
    CHECK(back.bytes == t.bytes);
  }
  const Tensor scalar = decode_tensor(bnorm::to_proto(Tensor::from_f64(DType::float16, {}, {1.0})));
  CHECK(scalar.dims.empty());
  CHECK(scalar.bytes == Bytes{0x00, 0x3C});
}

TEST_CASE("encode clears typed fields and external data and keeps doc_string") {
  onnx::TensorProto p = proto("old", DType::float32, {3});
  p.set_doc_string("weights");
  p.add_float_data(1.0f);
  p.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* kv = p.add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");

  bnorm::encode_tensor(Tensor::from_f64(DType::float32, {1}, {1.0}), &p);
  CHECK(p.name() == "old");  // an unnamed tensor keeps the proto's name
  CHECK(p.doc_string() == "weights");
  CHECK(p.float_data_size() == 0);
  CHECK(p.external_data_size() == 0);
  CHECK(p.data_location() == onnx::TensorProto_DataLocation_DEFAULT);
  CHECK_FALSE(bnorm::is_external(p));
  CHECK(p.raw_data() == std::string("\x00\x00\x80\x3F", 4));
  CHECK(p.dims_size() == 1);

  bnorm::encode_tensor(Tensor::from_f64(DType::float32, {1}, {1.0}, "new"), &p);
  CHECK(p.name() == "new");
}

TEST_CASE("encode refuses a tensor whose bytes do not match its dims") {
  Tensor t(DType::float32, {2}, "bad");
  t.bytes.resize(7);
  const auto e = error_of([&] { bnorm::to_proto(t); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'bad'") && Catch::Contains("7 bytes"));
}

TEST_CASE("external data is read from a side file in the model's directory") {
  TempDir dir;
  {
    std::ofstream out(dir.path / "w.bin", std::ios::binary);
    const char bytes[] = {'J', 'U', 'N', 'K', 0x00, 0x00, char(0x80), 0x3F, 0x00, 0x00, 0x20, char(0xC0)};
    out.write(bytes, sizeof bytes);
  }
  onnx::TensorProto p = proto("w", DType::float32, {2});
  p.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  for (const auto& [key, value] : {std::pair<const char*, const char*>{"location", "w.bin"}, {"offset", "4"},
                                   {"length", "8"}}) {
    auto* kv = p.add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
  CHECK(bnorm::is_external(p));
  CHECK(decode_tensor(p, dir.path).to_f64() == std::vector<double>{1.0, -2.5});

  auto e = error_of([&] { decode_tensor(p); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("tensor 'w'") && Catch::Contains("external"));

  p.set_raw_data(std::string(8, '\0'));
  e = error_of([&] { decode_tensor(p, dir.path); });
  CHECK_THAT(e.message(), Catch::Contains("external") && Catch::Contains("raw_data"));
}

TEST_CASE("int2 and uint2 unpack from raw_data and int32_data, four to a byte, lowest bits first, and pack back") {
  // ONNX's test_cast_FLOAT_to_INT2 output: 1, -2, -1, 0, 1, -2, -1 in 0x39 0x39 (the last two bits padding).
  const Tensor r = decode_tensor(raw_proto("q", DType::int2, {7}, {0x39, 0x39}));
  CHECK(r.bytes.size() == 7);
  CHECK(r.to_f64() == std::vector<double>{1, -2, -1, 0, 1, -2, -1});
  CHECK(bnorm::to_proto(r).raw_data() == std::string("\x39\x39", 2));
  onnx::TensorProto typed = proto("q", DType::int2, {7});
  for (int v : {0x39, 0x39}) typed.add_int32_data(v);
  CHECK(decode_tensor(typed).to_f64() == std::vector<double>{1, -2, -1, 0, 1, -2, -1});
  // uint2 0, 1, 2, 3 is 0b11100100; a fifth element 2 takes a byte of its own.
  const Tensor u = decode_tensor(raw_proto("u", DType::uint2, {5}, {0xE4, 0x02}));
  CHECK(u.to_f64() == std::vector<double>{0, 1, 2, 3, 2});
  CHECK(bnorm::to_proto(u).raw_data() == std::string("\xE4\x02", 2));
  // The packed size is what the dims need: 5 elements in 2 bytes.
  CHECK_THROWS_AS(decode_tensor(raw_proto("u", DType::uint2, {5}, {0xE4})), Error);
  CHECK_THROWS_AS(decode_tensor(raw_proto("u", DType::uint2, {5}, {0xE4, 0, 0})), Error);
  // Values out of the type's range are refused, not masked.
  Tensor bad(DType::int2, {1});
  bad.bytes[0] = 2;  // int2 holds -2..1 (0xFE..0x01)
  CHECK_THROWS_AS(bnorm::to_proto(bad), Error);
  CHECK_THROWS_AS(Tensor::from_f64(DType::uint2, {1}, {4}), Error);
  CHECK_THROWS_AS(Tensor::from_f64(DType::int2, {1}, {-3}), Error);
  CHECK(bnorm::dtype_name(DType::int2) == "int2");
  CHECK(bnorm::dtype_name(DType::uint2) == "uint2");
}

TEST_CASE("int4, uint4 and float4e2m1 unpack from raw_data and int32_data, low nibble first, and pack back") {
  // Five int4 elements 7, -8, -1, 0, 3: bytes 0x87, 0x0F, 0x03 (padding nibble 0).
  const Tensor r = decode_tensor(raw_proto("q", DType::int4, {5}, {0x87, 0x0F, 0x03}));
  CHECK(r.bytes.size() == 5);
  CHECK(r.to_f64() == std::vector<double>{7, -8, -1, 0, 3});
  onnx::TensorProto typed = proto("q", DType::int4, {5});
  for (int v : {0x87, 0x0F, 0x03}) typed.add_int32_data(v);
  CHECK(decode_tensor(typed).to_f64() == std::vector<double>{7, -8, -1, 0, 3});
  CHECK(bnorm::to_proto(r).raw_data() == std::string("\x87\x0F\x03", 3));

  const Tensor u = decode_tensor(raw_proto("u", DType::uint4, {3}, {0xF8, 0x01}));
  CHECK(u.to_f64() == std::vector<double>{8, 15, 1});
  CHECK(bnorm::to_proto(u).raw_data() == std::string("\xF8\x01", 2));
  const Tensor f = decode_tensor(raw_proto("f", DType::float4e2m1, {2, 2}, {0x7F, 0x21}));
  CHECK(f.to_f64() == std::vector<double>{-6, 6, 0.5, 1});
  CHECK(bnorm::to_proto(f).raw_data() == std::string("\x7F\x21", 2));

  // The packed size is what the dims need: 5 elements in 3 bytes, not 5 nor 2.
  CHECK_THROWS_AS(decode_tensor(raw_proto("q", DType::int4, {5}, {0x87, 0x0F})), Error);
  CHECK_THROWS_AS(decode_tensor(raw_proto("q", DType::int4, {5}, Bytes(5))), Error);
  onnx::TensorProto too_many = proto("q", DType::uint4, {2});
  too_many.add_int32_data(1);
  too_many.add_int32_data(2);
  CHECK_THROWS_AS(decode_tensor(too_many), Error);
  onnx::TensorProto out_of_byte = proto("q", DType::uint4, {2});
  out_of_byte.add_int32_data(256);
  CHECK_THROWS_AS(decode_tensor(out_of_byte), Error);
  // A tensor whose byte breaks the unpacked form is not silently masked.
  Tensor bad(DType::int4, {1});
  bad.bytes[0] = 0x10;
  CHECK_THROWS_AS(bnorm::to_proto(bad), Error);
}

TEST_CASE("float8 tensors hold one bit pattern per byte, from raw_data or int32_data") {
  const Tensor r = decode_tensor(raw_proto("f", DType::float8e4m3fn, {3}, {0x7E, 0x38, 0xFF}));
  const auto v = r.to_f64();
  CHECK(v[0] == 448);
  CHECK(v[1] == 1);
  CHECK(std::isnan(v[2]));
  onnx::TensorProto typed = proto("f", DType::float8e5m2, {2});
  typed.add_int32_data(0x7C);
  typed.add_int32_data(0xBC);
  CHECK(decode_tensor(typed).to_f64() == std::vector<double>{kInf, -1});
  CHECK(bnorm::to_proto(r).raw_data() == std::string("\x7E\x38\xFF", 3));
  CHECK(Tensor::from_f64(DType::float8e4m3fnuz, {2}, {1, 1e6}).bytes == Bytes{0x40, 0x80});
  CHECK_THROWS_AS(Tensor::from_f64(DType::int4, {1}, {8}), Error);
  CHECK(Tensor::from_f64(DType::uint4, {1}, {15}).to_f64() == std::vector<double>{15});
}

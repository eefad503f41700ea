#include "model/tensor_file.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"
#include "support/error_of.h"

using bnorm::DType;
using bnorm::Error;
using bnorm::ErrorKind;
using bnorm::Tensor;
using bnorm::test::error_of;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

// A fresh directory, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("bnorm_tensor_file_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path file(const std::string& name, const std::string& contents) const {
    std::ofstream(path / name, std::ios::binary) << contents;
    return path / name;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string bytes_of(const Tensor& t) { return std::string(t.bytes.begin(), t.bytes.end()); }

// Files as numpy 1.24's np.save writes them: magic and version, header
// length, the header dict, `pad` spaces, a newline, then the data.
const std::string kV1 = "\x93NUMPY\x01\x00"s;
std::string npy(const std::string& prefix, const std::string& dict, size_t pad, const std::string& data) {
  return prefix + dict + std::string(pad, ' ') + "\n" + data;
}

// A hand-made format 1.0 file: the header unpadded, which readers accept.
std::string hand_npy(const std::string& dict, const std::string& data) {
  const size_t len = dict.size() + 1;
  return kV1 + static_cast<char>(len & 0xFF) + static_cast<char>(len >> 8) + dict + "\n" + data;
}

struct Fixture {
  const char* what;
  std::string file;
  size_t numpy_size;  // total size of numpy's file
  DType dtype;
  std::vector<int64_t> dims;
  std::string data;
};

std::vector<Fixture> numpy_files() {
  // Every format 1.0 file below has a 118-byte header ("v\0").
  const auto v1 = [](const std::string& dict, size_t pad, const std::string& data) {
    return npy(kV1 + "v\0"s, dict, pad, data);
  };
  const std::string f4 = "\x00\x00\x80\x3F\x00\x00\x20\xC0"s;  // 1.0, -2.5
  std::string i8;                                          // 0, 1, ..., 5
  for (char i = 0; i < 6; ++i) i8 += std::string(1, i) + std::string(7, '\0');
  const std::string three = "\0\0\x40\x40"s, one = "\0\0\x80\x3F"s, half = "\0\0\0\0\0\0\xE0\x3F"s;
  const std::string f2 = "\x00\x3C\xFF\x7B\x01\x00"s;  // 1, 65504, 2^-24
  const std::string i2 = "\xFE\xFF\x2C\x01"s;            // -2, 300
  const std::string b1 = "\1\0\1"s, zeros(10, '\0');
  return {
      {"float32 (2,)", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 60, f4), 136,
       DType::float32, {2}, f4},
      {"float32 scalar", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 62, three), 132,
       DType::float32, {}, three},
      {"int64 (2, 3)", v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", 58, i8), 176,
       DType::int64, {2, 3}, i8},
      {"float16 (3,)", v1("{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 60, f2), 134,
       DType::float16, {3}, f2},
      {"bool (3,)", v1("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 60, b1), 131,
       DType::boolean, {3}, b1},
      {"uint8 (0, 3)", v1("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 3), }", 58, ""), 128,
       DType::uint8, {0, 3}, ""},
      {"uint8 (10,)", v1("{'descr': '|u1', 'fortran_order': False, 'shape': (10,), }", 59, zeros), 138,
       DType::uint8, {10}, zeros},
      {"int16 (2,)", v1("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", 60, i2), 132,
       DType::int16, {2}, i2},
      {"float64 (1,), format 2.0",
       npy("\x93NUMPY\x02\x00t\0\0\0"s, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 58, half),
       136, DType::float64, {1}, half},
      {"float32 (1,), format 3.0",
       npy("\x93NUMPY\x03\x00t\0\0\0"s, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 58, one),
       132, DType::float32, {1}, one},
  };
}

}  // namespace

TEST_CASE("npy files written by numpy are read with their dtype, shape and data") {
  TempDir dir;
  for (const auto& f : numpy_files()) {
    INFO(f.what);
    REQUIRE(f.file.size() == f.numpy_size);
    const Tensor t = bnorm::read_npy(dir.file("a.npy", f.file));
    CHECK(t.dtype == f.dtype);
    CHECK(t.dims == f.dims);
    CHECK(bytes_of(t) == f.data);
  }
}

TEST_CASE("write_npy produces the bytes numpy writes") {
  TempDir dir;
  for (const auto& f : numpy_files()) {
    if (f.file[6] != 1) continue;  // numpy writes format 1.0 whenever the header fits
    INFO(f.what);
    Tensor t;
    t.dtype = f.dtype;
    t.dims = f.dims;
    t.bytes.assign(f.data.begin(), f.data.end());
    bnorm::write_npy(t, dir.path / "out.npy");
    CHECK(slurp(dir.path / "out.npy") == f.file);
  }
}

TEST_CASE("every npy dtype round-trips through write and read") {
  TempDir dir;
  const DType types[] = {DType::float32, DType::float64, DType::float16, DType::int8,   DType::uint8,  DType::int16,
                         DType::uint16,  DType::int32,   DType::uint32,  DType::int64,  DType::uint64, DType::boolean};
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {}, {0}, {4, 0, 2}};
  for (DType type : types) {
    for (const auto& shape : shapes) {
      INFO(bnorm::dtype_name(type) << " " << bnorm::shape_str(shape));
      Tensor t(type, shape);
      for (size_t i = 0; i < t.bytes.size(); ++i) {
        t.bytes[i] = static_cast<uint8_t>(type == DType::boolean ? (i + 1) % 2 : i * 29 + 3);
      }
      bnorm::write_tensor_file(t, dir.path / "t.npy");
      const Tensor back = bnorm::read_tensor_file(dir.path / "t.npy");
      CHECK(back.dtype == type);
      CHECK(back.dims == shape);
      CHECK(back.bytes == t.bytes);
      // The data starts on a 64-byte boundary, as numpy lays it out.
      CHECK((fs::file_size(dir.path / "t.npy") - t.bytes.size()) % 64 == 0);
    }
  }
}

TEST_CASE("npy header spellings numpy accepts are read") {
  TempDir dir;
  const std::string one = "\0\0\x80\x3F"s;
  const auto read = [&](const std::string& dict) {
    return bnorm::read_npy(dir.file("h.npy", hand_npy(dict, one)));
  };
  CHECK(read("{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }").dtype == DType::float32);
  CHECK(read("{\"shape\": (1,), \"fortran_order\": False, \"descr\": \"<f4\"}").dims == std::vector<int64_t>{1});
  CHECK(read("{'descr':'<f4','fortran_order':False,'shape':(1,1,)}").dims == std::vector<int64_t>{1, 1});
  CHECK(read("{'descr': '<f4', 'fortran_order': False, 'shape': (1L,), }").dims == std::vector<int64_t>{1});
  CHECK(read("{'descr': '<u1', 'fortran_order': False, 'shape': (4,), }").dtype == DType::uint8);
  // Column-major order is the same layout when at most one dim exceeds 1.
  CHECK(read("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }").dims == std::vector<int64_t>{1, 1});
}

TEST_CASE("fortran_order npy arrays are refused with a hint") {
  TempDir dir;
  const std::string file = npy(kV1 + "v\0"s, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 59,
                               std::string(16, '\0'));
  REQUIRE(file.size() == 144);
  const fs::path path = dir.file("f.npy", file);
  const auto e = error_of([&] { bnorm::read_npy(path); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK_THAT(e.message(), Catch::Contains("fortran_order") && Catch::Contains(path.string()));
  CHECK_THAT(e.hint(), Catch::Contains("ascontiguousarray"));
}

TEST_CASE("big-endian npy arrays are refused with a hint") {
  TempDir dir;
  const std::string file = npy(kV1 + "v\0"s, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 60,
                               "\x3F\x80\x00\x00"s);
  REQUIRE(file.size() == 132);
  const auto e = error_of([&] { bnorm::read_npy(dir.file("b.npy", file)); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK_THAT(e.message(), Catch::Contains("'>f4'") && Catch::Contains("big-endian"));
  CHECK_THAT(e.hint(), Catch::Contains("<f4"));
}

TEST_CASE("bfloat16 cannot be written as npy") {
  TempDir dir;
  const Tensor t = Tensor::from_f64(DType::bfloat16, {1}, {1.0});
  const auto e = error_of([&] { bnorm::write_tensor_file(t, dir.path / "b.npy"); });
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK(e.bare_message() == "bfloat16 has no .npy type; use .pb");
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("truncated npy files are refused before any allocation") {
  TempDir dir;
  const std::string good = numpy_files()[0].file;
  auto refused = [&](const std::string& contents, const std::string& words) {
    const fs::path path = dir.file("t.npy", contents);
    const auto e = error_of([&] { bnorm::read_npy(path); });
    CHECK(e.kind() == ErrorKind::input);
    CHECK(e.file() == path.string());
    CHECK_THAT(e.message(), Catch::Contains(words));
  };
  refused(good.substr(0, good.size() - 1), "truncated");  // last data byte missing
  refused(good.substr(0, 60), "truncated");                // header cut short
  refused(good.substr(0, 5), "not a .npy file");
  refused(good + "x", "after the array data");
  // 10^12 claimed elements with 4 bytes of data: refused from the sizes alone.
  refused(hand_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", "abcd"),
          "needs 4000000000000 data bytes, 4 present");
  refused(hand_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
          "overflow");
}

TEST_CASE("malformed or unsupported npy files are refused") {
  TempDir dir;
  const auto error_for = [&](const std::string& contents) {
    return error_of([&] { bnorm::read_npy(dir.file("m.npy", contents)); });
  };
  const std::string data = "\0\0\x80\x3F"s;
  auto e = error_for("\x93NUMPX\x01\x00v\0"s + std::string(118, ' '));
  CHECK_THAT(e.message(), Catch::Contains("magic"));
  e = error_for("\x93NUMPY\x04\x00v\0\0\0"s + std::string(116, ' ') + data);
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK_THAT(e.message(), Catch::Contains("4.0"));
  e = error_for(hand_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data + data));
  CHECK(e.kind() == ErrorKind::unsupported);
  CHECK_THAT(e.message(), Catch::Contains("'<c8'"));
  e = error_for(hand_npy("{'descr': '<f4', 'shape': (1,), }", data));
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("fortran_order"));
  e = error_for(hand_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", data));
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("malformed"));
  e = error_for(hand_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", data));
  CHECK(e.kind() == ErrorKind::unsupported);
}

TEST_CASE("pb tensor files round-trip and match ONNX's wire format") {
  TempDir dir;
  // TensorProto{dims: [2], data_type: FLOAT, name: "x", raw_data: 1.0, -2.5}
  // field 1 (dims) varint, field 2 (data_type) varint, field 8 (name) and
  // field 9 (raw_data) length-delimited.
  const std::string wire = "\x08\x02\x10\x01\x42\x01x\x4A\x08\x00\x00\x80\x3F\x00\x00\x20\xC0"s;
  const Tensor t = bnorm::read_tensor_file(dir.file("input_0.pb", wire));
  CHECK(t.name == "x");
  CHECK(t.dtype == DType::float32);
  CHECK(t.dims == std::vector<int64_t>{2});
  CHECK(t.to_f64() == std::vector<double>{1.0, -2.5});

  bnorm::write_tensor_file(t, dir.path / "out.pb");
  CHECK(slurp(dir.path / "out.pb") == wire);

  const Tensor h = Tensor::from_f64(DType::bfloat16, {2, 1}, {1.0, -5.0}, "h");
  bnorm::write_pb(h, dir.path / "h.pb");
  const Tensor back = bnorm::read_pb(dir.path / "h.pb");
  CHECK(back.name == "h");
  CHECK(back.dims == h.dims);
  CHECK(back.bytes == std::vector<uint8_t>{0x80, 0x3F, 0xA0, 0xC0});
}

TEST_CASE("pb files that do not parse or decode are refused naming the file") {
  TempDir dir;
  const fs::path garbage = dir.file("g.pb", "\xFF\xFF\xFF\xFF"s);
  auto e = error_of([&] { bnorm::read_tensor_file(garbage); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.file() == garbage.string());

  const fs::path empty = dir.file("e.pb", "");
  e = error_of([&] { bnorm::read_pb(empty); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains(empty.string()) && Catch::Contains("empty"));

  // dims [3] of float with 8 bytes of raw data
  const fs::path short_data = dir.file("s.pb", "\x08\x03\x10\x01\x42\x01x\x4A\x08\0\0\0\0\0\0\0\0"s);
  e = error_of([&] { bnorm::read_pb(short_data); });
  CHECK(e.file() == short_data.string());
  CHECK_THAT(e.message(), Catch::Contains("raw_data has 8 bytes"));

  e = error_of([&] { bnorm::read_pb(dir.path / "missing.pb"); });
  CHECK(e.kind() == ErrorKind::input);
  CHECK_THAT(e.message(), Catch::Contains("missing.pb"));
}

TEST_CASE("tensor files are chosen by extension, others are a usage error") {
  TempDir dir;
  const Tensor t = Tensor::from_f64(DType::float32, {1}, {1.0}, "x");
  bnorm::write_tensor_file(t, dir.path / "a.NPY");
  CHECK(slurp(dir.path / "a.NPY").compare(0, 6, "\x93NUMPY") == 0);
  CHECK(bnorm::read_tensor_file(dir.path / "a.NPY").bytes == t.bytes);

  for (const char* name : {"a.txt", "a", "a.npz"}) {
    INFO(name);
    auto e = error_of([&] { bnorm::write_tensor_file(t, dir.path / name); });
    CHECK(e.kind() == ErrorKind::usage);
    e = error_of([&] { bnorm::read_tensor_file(dir.path / name); });
    CHECK(e.kind() == ErrorKind::usage);
    CHECK_THAT(e.message(), Catch::Contains(".pb or .npy"));
  }
}

TEST_CASE("writing a tensor file replaces the target and leaves no temporary file") {
  TempDir dir;
  const fs::path path = dir.path / "w.npy";
  bnorm::write_npy(Tensor::from_f64(DType::int32, {3}, {1, 2, 3}), path);
  bnorm::write_npy(Tensor::from_f64(DType::int32, {1}, {7}), path);
  CHECK(bnorm::read_npy(path).to_f64() == std::vector<double>{7});
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("pb tensor files of int4 and float8 round-trip, int4 packed two per byte in the file") {
  TempDir dir;
  const Tensor q = Tensor::from_f64(DType::int4, {3}, {-8, 7, -1}, "q");
  bnorm::write_pb(q, dir.path / "q.pb");
  // TensorProto{dims: [3], data_type: INT4 (22), name: "q", raw_data: 0x78, 0x0F}
  CHECK(slurp(dir.path / "q.pb") == "\x08\x03\x10\x16\x42\x01q\x4A\x02\x78\x0F"s);
  const Tensor back = bnorm::read_pb(dir.path / "q.pb");
  CHECK(back.dtype == DType::int4);
  CHECK(back.bytes == q.bytes);
  CHECK(back.to_f64() == std::vector<double>{-8, 7, -1});

  Tensor f(DType::float8e4m3fnuz, {2}, "f");
  f.bytes = {0x80, 0x40};  // NaN, 1
  bnorm::write_pb(f, dir.path / "f.pb");
  CHECK(bnorm::read_pb(dir.path / "f.pb").bytes == f.bytes);
  CHECK_THROWS_AS(bnorm::write_npy(f, dir.path / "f.npy"), Error);
}

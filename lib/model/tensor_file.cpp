#include "model/tensor_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.h"
#include "model/output_file.h"
#include "model/tensor_proto.h"

namespace fs = std::filesystem;

namespace bnorm {

namespace {

// A stream ("-" for stdin, a FIFO, a process substitution), read to its end.
bool is_stream_path(const fs::path& path) {
  if (path == "-") return true;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  return !ec && (st.type() == fs::file_type::fifo || st.type() == fs::file_type::character ||
                 st.type() == fs::file_type::socket);
}

std::string read_stream(const fs::path& path, uint64_t limit, const char* too_large) {
  const int fd = path == "-" ? ::dup(0) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorKind::input, "cannot open for reading: {}", std::generic_category().message(errno));
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail(ErrorKind::input, "read error: {}", std::generic_category().message(err));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > limit) {
      ::close(fd);
      fail(ErrorKind::input, "more than {} bytes {}", limit, too_large);
    }
  }
  ::close(fd);
  return data;
}

// The whole of `path`, a regular file or a stream, of at most `limit` bytes.
std::string read_whole(const fs::path& path, uint64_t limit, const char* too_large) {
  if (is_stream_path(path)) return read_stream(path, limit, too_large);
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(ErrorKind::input, "file does not exist");
  if (!fs::is_regular_file(path, ec)) fail(ErrorKind::input, "not a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (ec) fail(ErrorKind::input, "cannot read: {}", ec.message());
  if (size > limit) fail(ErrorKind::input, "{} bytes {}", size, too_large);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::input, "cannot open for reading");
  std::string data(size, '\0');
  if (size > 0 && !in.read(data.data(), static_cast<std::streamsize>(size))) fail(ErrorKind::input, "read error");
  return data;
}

// .npy format: magic "\x93NUMPY", major and minor version bytes, the header
// length (uint16 LE in 1.0, uint32 LE in 2.0 and 3.0), then the header: a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces and a newline, then the raw array data.

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr uint64_t kMaxHeader = 1 << 20;  // numpy's own headers are < 1 KiB; refuse absurd ones

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

// Recursive-descent parser for the header's Python literal.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  NpyHeader parse() {
    NpyHeader h;
    expect('{');
    while (!eat('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == '[') {
          fail(ErrorKind::unsupported, ".npy structured dtypes (descr lists) are not supported");
        }
        h.descr = string_literal();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        h.has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        h.has_shape = true;
      } else {
        fail(ErrorKind::input, "malformed .npy header: unexpected key '{}'", key);
      }
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    skip_ws();
    if (pos_ != s_.size()) bad("text after the dict");
    if (!h.has_descr || !h.has_order || !h.has_shape) {
      bad("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
    }
    return h;
  }

 private:
  [[noreturn]] void bad(std::string_view what) {
    std::string_view shown = s_.substr(0, s_.find_last_not_of(" \n") + 1);
    if (shown.size() > 200) shown = shown.substr(0, 200);
    fail(ErrorKind::input, "malformed .npy header ({} at offset {}): {}", what, pos_, shown);
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(fmt::format("expected '{}'", c));
  }
  std::string string_literal() {
    skip_ws();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) bad("expected a string");
    const char quote = s_[pos_++];
    const size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    if (out.find('\\') != std::string::npos) bad("escape in string");
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    bad("expected True or False");
  }
  int64_t integer() {
    skip_ws();
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) bad("expected a dimension");
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const int digit = s_[pos_++] - '0';
      if (v > (INT64_MAX - digit) / 10) bad("dimension overflows int64");
      v = v * 10 + digit;
    }
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return v;
  }
  // "()", "(3,)", "(2, 3)", "(2, 3,)"
  std::vector<int64_t> tuple() {
    std::vector<int64_t> out;
    expect('(');
    while (!eat(')')) {
      out.push_back(integer());
      if (!eat(',')) {
        if (out.size() == 1) bad("a one-element tuple needs a trailing comma");
        expect(')');
        break;
      }
    }
    return out;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

struct NpyType {
  const char* code;  // descr without the byte-order character
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"f4", DType::float32}, {"f8", DType::float64}, {"f2", DType::float16}, {"i8", DType::int64},
    {"i4", DType::int32},   {"i2", DType::int16},   {"i1", DType::int8},    {"u1", DType::uint8},
    {"u2", DType::uint16},  {"u4", DType::uint32},  {"u8", DType::uint64},  {"b1", DType::boolean},
};

DType npy_dtype(const std::string& descr) {
  const std::string code = descr.size() == 3 ? descr.substr(1) : std::string();
  for (const auto& t : kNpyTypes) {
    if (code != t.code) continue;
    const char order = descr[0];
    // Byte order is irrelevant for one-byte types; otherwise little-endian
    // ('<', or '=' native, this being a little-endian host).
    if (dtype_size(t.dtype) == 1 || order == '<' || order == '=') return t.dtype;
    if (order == '>') {
      throw Error(ErrorKind::unsupported, fmt::format(".npy dtype '{}' is big-endian", descr),
                  fmt::format("save it little-endian: arr.astype('<{}')", code));
    }
    break;
  }
  fail(ErrorKind::unsupported, ".npy dtype '{}' is not supported (float16/32/64, int8-64, uint8-64, bool are)",
       descr);
}

std::string npy_descr(DType t) {
  if (t == DType::bfloat16) fail(ErrorKind::unsupported, "bfloat16 has no .npy type; use .pb");
  for (const auto& n : kNpyTypes) {
    if (n.dtype == t) return (dtype_size(t) == 1 ? "|" : "<") + std::string(n.code);
  }
  fail(ErrorKind::unsupported, "type {} has no .npy type", dtype_name(t));
}

// Python's repr of the shape tuple: "()", "(3,)", "(2, 3)".
std::string py_tuple(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

// Magic, version, length and header, laid out byte for byte as numpy does:
// keys sorted, room for the first dim to grow to 21 digits, spaces and a
// newline up to a multiple of 64 bytes (a full 64 when already aligned);
// version 2.0 only when the header does not fit a uint16 length.
std::string npy_prefix_and_header(const std::string& descr, const std::vector<int64_t>& dims) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, py_tuple(dims));
  if (!dims.empty()) dict.append(21 - std::to_string(dims[0]).size(), ' ');
  for (const int major : {1, 2}) {
    const size_t len_size = major == 1 ? 2 : 4;
    const size_t unpadded = kMagicLen + 2 + len_size + dict.size() + 1;
    const size_t header_len = dict.size() + 1 + (64 - unpadded % 64);
    if (major == 1 && header_len > 0xFFFF) continue;
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < len_size; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
    out += dict;
    out.append(header_len - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  fail(ErrorKind::unsupported, "shape {} is too long for a .npy header", shape_str(dims));
}

Tensor npy_from_bytes(std::string_view data) {
  const uint64_t file_size = data.size();
  if (file_size < 10) fail(ErrorKind::input, "not a .npy file: only {} bytes", file_size);
  const auto* prefix = reinterpret_cast<const unsigned char*>(data.data());
  if (std::memcmp(prefix, kMagic, kMagicLen) != 0) fail(ErrorKind::input, "not a .npy file (no \\x93NUMPY magic)");
  const int major = prefix[6], minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail(ErrorKind::unsupported, ".npy format version {}.{} is not supported (1.0 to 3.0 are)", major, minor);
  }
  uint64_t prefix_len = 10, header_len = prefix[8] | (prefix[9] << 8);
  if (major >= 2) {
    if (file_size < 12) fail(ErrorKind::input, "truncated .npy file: only {} bytes", file_size);
    prefix_len = 12;
    header_len |= (uint64_t{prefix[10]} << 16) | (uint64_t{prefix[11]} << 24);
  }
  if (header_len > file_size - prefix_len) {
    fail(ErrorKind::input, "truncated .npy file: the header claims {} bytes, {} follow", header_len,
         file_size - prefix_len);
  }
  if (header_len > kMaxHeader) fail(ErrorKind::input, ".npy header of {} bytes is too large", header_len);
  const std::string_view text = data.substr(prefix_len, header_len);
  const NpyHeader h = HeaderParser(text).parse();

  Tensor t;
  t.dtype = npy_dtype(h.descr);
  t.dims = h.shape;
  const size_t size = dtype_size(t.dtype);
  const int64_t numel = checked_numel(t.dims, INT64_MAX / static_cast<int64_t>(size));
  // Fortran and C order agree when at most one dim exceeds 1.
  if (h.fortran_order && std::count_if(t.dims.begin(), t.dims.end(), [](int64_t d) { return d > 1; }) > 1) {
    throw Error(ErrorKind::unsupported, "fortran_order (column-major) .npy arrays are not supported",
                "save a C-order array: np.save(path, np.ascontiguousarray(arr))");
  }
  const uint64_t need = static_cast<uint64_t>(numel) * size;
  const uint64_t have = file_size - prefix_len - header_len;
  if (have < need) {
    fail(ErrorKind::input, "truncated .npy file: shape {} of '{}' needs {} data bytes, {} present", py_tuple(t.dims),
         h.descr, need, have);
  }
  if (have > need) {
    fail(ErrorKind::input, ".npy file has {} bytes after the array data (shape {} of '{}')", have - need,
         py_tuple(t.dims), h.descr);
  }
  const auto* first = prefix + prefix_len + header_len;
  t.bytes.assign(first, first + need);
  return t;
}

enum class FileKind { pb, npy };

FileKind kind_of(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".pb") return FileKind::pb;
  if (ext == ".npy") return FileKind::npy;
  fail(ErrorKind::usage, "'{}': unknown tensor file type '{}'; use .pb or .npy", path.string(), ext);
}

size_t checked_byte_size(const Tensor& t) {
  const size_t size = dtype_size(t.dtype);
  if (size == 0) fail(ErrorKind::input, "type {} cannot be written", dtype_name(t.dtype));
  const int64_t numel = checked_numel(t.dims, INT64_MAX / static_cast<int64_t>(size));
  if (t.bytes.size() != static_cast<uint64_t>(numel) * size) {
    fail(ErrorKind::input, "tensor holds {} bytes, dims {} of {} need {}", t.bytes.size(), shape_str(t.dims),
         dtype_name(t.dtype), static_cast<uint64_t>(numel) * size);
  }
  return t.bytes.size();
}

}  // namespace

Tensor parse_npy(std::string_view bytes) { return npy_from_bytes(bytes); }

Tensor read_npy(const fs::path& path) {
  try {
    return npy_from_bytes(read_whole(path, UINT64_MAX, ""));
  } catch (Error& e) {
    e.in_file(path.string());
    throw;
  }
}

void write_npy(const Tensor& t, const fs::path& path) {
  try {
    const std::string descr = npy_descr(t.dtype);
    const size_t n = checked_byte_size(t);
    const std::string header = npy_prefix_and_header(descr, t.dims);
    OutputFile out(plan_output(path.string()));
    out.write(header);
    out.write(t.bytes.data(), n);
    out.commit();
  } catch (Error& e) {
    e.in_file(path.string());
    throw;
  }
}

Tensor parse_pb(const std::string& bytes, const fs::path& dir) {
  if (bytes.empty()) fail(ErrorKind::input, "empty file, expected a serialized ONNX TensorProto");
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) fail(ErrorKind::input, "cannot parse as a serialized ONNX TensorProto");
  return decode_tensor(p, dir);
}

Tensor read_pb(const fs::path& path) {
  try {
    const std::string data = read_whole(path, INT_MAX, "is over protobuf's 2 GiB limit");
    return parse_pb(data, path.parent_path().empty() ? fs::path(".") : path.parent_path());
  } catch (Error& e) {
    e.in_file(path.string());
    throw;
  }
}

void write_pb(const Tensor& t, const fs::path& path) {
  try {
    checked_byte_size(t);
    const onnx::TensorProto p = to_proto(t);
    if (p.ByteSizeLong() > INT_MAX) fail(ErrorKind::unsupported, "tensor is over protobuf's 2 GiB limit; use .npy");
    std::string data;
    if (!p.SerializeToString(&data)) fail(ErrorKind::input, "cannot serialize the tensor");
    OutputFile out(plan_output(path.string()));
    out.write(data);
    out.commit();
  } catch (Error& e) {
    e.in_file(path.string());
    throw;
  }
}

Tensor read_tensor_file(const fs::path& path) {
  if (!is_stream_path(path)) return kind_of(path) == FileKind::pb ? read_pb(path) : read_npy(path);
  // A stream has no extension to go by: .npy data opens with its magic.
  const std::string name = path == "-" ? "<stdin>" : path.string();
  try {
    const std::string data = read_stream(path, INT_MAX, "is over protobuf's 2 GiB limit");
    if (data.compare(0, kMagicLen, kMagic, kMagicLen) == 0) return npy_from_bytes(data);
    return parse_pb(data, fs::path("."));
  } catch (Error& e) {
    e.in_file(name);
    throw;
  }
}

void write_tensor_file(const Tensor& t, const fs::path& path) {
  if (kind_of(path) == FileKind::pb) write_pb(t, path);
  else write_npy(t, path);
}

}  // namespace bnorm

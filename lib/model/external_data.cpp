#include "model/external_data.h"

#include <fstream>
#include <system_error>

#include "core/error.h"

namespace fs = std::filesystem;

namespace bnorm {

namespace {

int64_t parse_nonneg(const std::string& v, const std::string& key, const std::string& tensor) {
  try {
    size_t used = 0;
    const long long x = std::stoll(v, &used);
    if (used == v.size() && x >= 0) return x;
  } catch (const std::exception&) {
  }
  fail(ErrorKind::input, "tensor '{}': external data {} '{}' is not a non-negative integer", tensor, key, v);
}

bool inside(const fs::path& dir, const fs::path& p) {
  auto d = dir.begin();
  auto q = p.begin();
  for (; d != dir.end(); ++d, ++q) {
    if (d->empty()) continue;  // trailing separator
    if (q == p.end() || *d != *q) return false;
  }
  return true;
}

// `p` made absolute with every symlink in it followed, dangling ones too
// (weakly_canonical takes a dangling link for a plain name, which would let
// a link to a file not yet written point anywhere).
fs::path follow_links(const fs::path& p, int depth = 0) {
  if (depth > 40) throw Error(ErrorKind::input, fmt::format("too many levels of symbolic links in '{}'", p.string()));
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec);
  if (ec) return p.lexically_normal();
  fs::path out;
  for (const auto& part : abs) {
    out /= part;
    if (!fs::is_symlink(fs::symlink_status(out, ec))) continue;
    const fs::path target = fs::read_symlink(out, ec);
    if (ec) break;
    out = follow_links(target.is_absolute() ? target : out.parent_path() / target, depth + 1);
  }
  return out.lexically_normal();
}

}  // namespace

ExternalRef external_ref(const onnx::TensorProto& p) {
  ExternalRef ref;
  bool has_location = false;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") {
      ref.location = kv.value();
      has_location = true;
    } else if (kv.key() == "offset") {
      ref.offset = parse_nonneg(kv.value(), "offset", p.name());
    } else if (kv.key() == "length") {
      ref.length = parse_nonneg(kv.value(), "length", p.name());
    }
  }
  if (!has_location || ref.location.empty()) {
    fail(ErrorKind::input, "tensor '{}': external data has no location", p.name());
  }
  return ref;
}

fs::path resolve_external_location(const fs::path& base_dir, const std::string& location) {
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
    throw Error(ErrorKind::input,
                fmt::format("external data location '{}' is an absolute path", location),
                "locations must be relative paths inside the model's directory");
  }
  for (const auto& part : loc) {
    if (part == "..") {
      throw Error(ErrorKind::input, fmt::format("external data location '{}' leaves the model's directory", location),
                  "locations must be relative paths inside the model's directory");
    }
  }
  const fs::path dir = base_dir.empty() ? fs::path(".") : base_dir;
  const fs::path full = dir / loc;
  if (!inside(follow_links(dir), follow_links(full))) {
    throw Error(ErrorKind::input,
                fmt::format("external data location '{}' resolves outside the model's directory", location),
                "a symlink points out of the model's directory");
  }
  return full;
}

fs::path check_external(const fs::path& base_dir, const ExternalRef& ref, int64_t expected,
                        const std::string& tensor_name) {
  fs::path path;
  try {
    path = resolve_external_location(base_dir, ref.location);
  } catch (Error& e) {
    e.context("tensor '" + tensor_name + "'");
    throw;
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    fail(ErrorKind::input, "tensor '{}': external data file '{}' does not exist", tensor_name, ref.location);
  }
  const auto file_size = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec) fail(ErrorKind::input, "tensor '{}': cannot read '{}'", tensor_name, ref.location);
  if (ref.offset > file_size) {
    fail(ErrorKind::input, "tensor '{}': external data offset {} is past the end of '{}' ({} bytes)", tensor_name,
         ref.offset, ref.location, file_size);
  }
  const int64_t length = ref.length >= 0 ? ref.length : file_size - ref.offset;
  if (length > file_size - ref.offset) {
    fail(ErrorKind::input, "tensor '{}': external data [{}, {}) is past the end of '{}' ({} bytes)", tensor_name,
         ref.offset, static_cast<uint64_t>(ref.offset) + static_cast<uint64_t>(length), ref.location, file_size);
  }
  if (expected >= 0 && length != expected) {
    fail(ErrorKind::input, "tensor '{}': external data has {} bytes, its dims and type need {}", tensor_name, length,
         expected);
  }
  return path;
}

std::vector<uint8_t> read_external(const fs::path& base_dir, const ExternalRef& ref, int64_t expected,
                                   const std::string& tensor_name) {
  const fs::path path = check_external(base_dir, ref, expected, tensor_name);
  std::error_code ec;
  const auto file_size = static_cast<int64_t>(fs::file_size(path, ec));
  const int64_t length = ref.length >= 0 ? ref.length : file_size - ref.offset;
  std::vector<uint8_t> bytes(static_cast<size_t>(length));
  std::ifstream in(path, std::ios::binary);
  in.seekg(ref.offset);
  if (length > 0) in.read(reinterpret_cast<char*>(bytes.data()), length);
  if (!in) fail(ErrorKind::input, "tensor '{}': cannot read {} bytes from '{}'", tensor_name, length, ref.location);
  return bytes;
}

}  // namespace bnorm

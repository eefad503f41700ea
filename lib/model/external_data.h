// External data: tensor bytes kept in side files next to the model
// (TensorProto.data_location = EXTERNAL, external_data entries
// location / offset / length).
//
// Safety: a location must be a relative path that stays inside the model's
// directory. Absolute paths, any ".." component and symlinks that resolve
// outside are refused, on reading and on writing, as ONNX does since its
// path-traversal fixes. Offsets and lengths are checked against the file.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bnorm {

struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

// Parses the external_data entries of `p`; throws Error(input) when the
// location is missing or offset/length are not non-negative integers.
ExternalRef external_ref(const onnx::TensorProto& p);

// Resolves `location` against `base_dir` and checks it stays inside it
// (lexically and through symlinks). Throws Error(input) otherwise.
std::filesystem::path resolve_external_location(const std::filesystem::path& base_dir,
                                                const std::string& location);

// Checks, without reading, what read_external checks: the location, that
// the file exists, and that the range lies inside it (and has `expected`
// bytes when that is >= 0). Returns the file's path.
std::filesystem::path check_external(const std::filesystem::path& base_dir, const ExternalRef& ref,
                                     int64_t expected, const std::string& tensor_name);

// Reads the bytes `ref` names. `expected` (if >= 0) is the size the tensor's
// dims and type require; a mismatch is an error, found before reading.
std::vector<uint8_t> read_external(const std::filesystem::path& base_dir, const ExternalRef& ref,
                                   int64_t expected, const std::string& tensor_name);

}  // namespace bnorm

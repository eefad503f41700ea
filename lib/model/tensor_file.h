// Tensor files: ONNX's `.pb` (a serialized TensorProto, as in the backend
// test layout's input_N.pb / output_N.pb) and NumPy's `.npy` (format 1.0
// to 3.0, little-endian, C order: '<f4', '<f8', '<f2', and the integer and
// bool types; bfloat16 has no npy type and is refused with a clear error).
// The kind is chosen by the file extension; a stream ("-" for stdin, a
// FIFO, a process substitution) is read to its end and is .npy when its
// data opens with .npy's magic, else .pb.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "model/tensor.h"

namespace bnorm {

Tensor read_tensor_file(const std::filesystem::path& path);
// Writes through the one writer (output_file.h): a file appears only complete.
void write_tensor_file(const Tensor& t, const std::filesystem::path& path);

Tensor read_npy(const std::filesystem::path& path);
void write_npy(const Tensor& t, const std::filesystem::path& path);
Tensor read_pb(const std::filesystem::path& path);
void write_pb(const Tensor& t, const std::filesystem::path& path);

// The same decoders on a whole file's bytes already in memory (fuzzing,
// tests). parse_pb resolves external data relative to `dir`; with an empty
// `dir` a tensor with external data is refused.
Tensor parse_npy(std::string_view bytes);
Tensor parse_pb(const std::string& bytes, const std::filesystem::path& dir);

}  // namespace bnorm

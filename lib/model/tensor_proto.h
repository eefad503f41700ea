// TensorProto <-> Tensor.
//
// Decoding accepts every storage ONNX allows for the types bnorm holds:
// raw_data (little-endian), the typed fields (float_data, double_data,
// int32_data -- which also carries int8/int16/uint8/uint16/bool, the bit
// patterns of float16/bfloat16/float8/float8e8m0, and bytes of two packed 4-bit or
// four packed 2-bit elements --, int64_data, uint64_data -- uint32 and
// uint64 --) and external data (read from a side file next to the model).
// Declared dims are checked against the data size before any allocation.
// int4, uint4 and float4e2m1 are packed two per byte in every storage
// (first element in the low nibble), int2 and uint2 four per byte (first in
// the lowest two bits); both are unpacked to one per byte in the Tensor
// (model/tensor.h). Encoding always writes the canonical form: raw_data
// (packed for the sub-byte types), typed fields empty.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "model/tensor.h"

namespace bnorm {

// True when the tensor's data lives in a side file (data_location EXTERNAL).
bool is_external(const onnx::TensorProto& p);

// Decodes `p`. `base_dir` is the model's directory, used to resolve
// external data; an external tensor with no base_dir is an error.
// Throws Error(input) naming the tensor on any inconsistency.
Tensor decode_tensor(const onnx::TensorProto& p, const std::filesystem::path& base_dir = {});

// The checks of decode_tensor that need no reading: dims (negative,
// overflowing) against the data's size in raw_data, the typed field or the
// side file (location inside `base_dir`, the file present, the range inside
// it). Types bnorm cannot decode (strings, ...) only have their dims checked.
// Throws Error(input) naming the tensor.
void check_tensor_proto(const onnx::TensorProto& p, const std::filesystem::path& base_dir);

// Writes `t` into `out` in canonical raw form: name, data_type, dims,
// raw_data; every typed field and external-data entry is cleared, other
// fields (doc_string, metadata) are kept.
void encode_tensor(const Tensor& t, onnx::TensorProto* out);
onnx::TensorProto to_proto(const Tensor& t);

// Adds a graph input declaring a tensor of `elem_type` and `dims` (an
// empty shape for a scalar: the checker wants a shape on every input), as
// IR < 4 requires for each initializer.
void add_tensor_input(onnx::GraphProto& g, const std::string& name, int32_t elem_type,
                      const google::protobuf::RepeatedField<int64_t>& dims);
void add_tensor_input(onnx::GraphProto& g, const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims);

}  // namespace bnorm

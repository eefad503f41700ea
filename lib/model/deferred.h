// Deferred tensors: large raw_data left in the model file it was read from.
//
// load_model reads the model's structure and every small tensor, but the
// raw_data of large main-graph initializers stays in the file: such a
// TensorProto has data_location = EXTERNAL and the external_data entries
// kDeferredKey (the id of the open source file), "offset" and "length".
// Decoding reads the bytes from the source file (held open, so replacing
// the file on disk, e.g. by saving over it, does not change what is read);
// saving writes them back into the output one tensor at a time. So a model
// is never in memory twice, and most commands hold only its structure.
//
// A file given as input cannot smuggle the key in: load_model refuses a
// model whose tensors already carry it.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bnorm {

inline constexpr const char* kDeferredKey = "bnorm:deferred";

// An open model file deferred tensors read from; closed when the last
// Model holding it goes.
class SourceFile;
std::shared_ptr<SourceFile> open_source(const std::filesystem::path& path);
// The same for a descriptor already open (taken: closed with the source),
// read from offset 0 by position; `name` is used in messages, `path` opens
// the same file again (empty: /proc/self/fd/N, for an unnamed file).
std::shared_ptr<SourceFile> adopt_source(int fd, const std::string& name, const std::string& path = {});
int64_t source_id(const SourceFile& f);
int source_fd(const SourceFile& f);

struct DeferredRef {
  int64_t source = -1, offset = 0, length = 0;
};

bool is_deferred(const onnx::TensorProto& t);
// A path that opens the file a deferred tensor's bytes are in ("" when it
// is closed): the model's path, or /proc/self/fd/N for a spooled stream.
std::string deferred_source_path(const onnx::TensorProto& t);
// Throws Error(input) when the entries are malformed.
DeferredRef deferred_ref(const onnx::TensorProto& t);
// Marks `t` (its raw_data not loaded) as deferred to [offset, offset + length) of `source`.
void set_deferred(onnx::TensorProto& t, const SourceFile& source, int64_t offset, int64_t length);
// The bytes of a deferred tensor. Throws Error(input) naming the tensor when
// the source is gone or the read fails.
std::vector<uint8_t> read_deferred(const onnx::TensorProto& t);
// The same into `out` (resized; its capacity is reused).
void read_deferred_into(const onnx::TensorProto& t, std::vector<uint8_t>& out);
// The same, handed to `f(data, size)` in pieces of a few MiB (streaming writes).
void read_deferred_chunks(const onnx::TensorProto& t, const std::function<void(const char*, size_t)>& f);

// Parses the ModelProto in `size` bytes of `source` (from offset 0) with the
// raw_data of main-graph initializers of at least `threshold` bytes left
// in the file (deferred). Returns false, having parsed nothing, when the
// file's layout is not the plain one this reader handles (a repeated graph
// or raw_data field, groups, a truncation, ...): the caller then parses the
// whole file as usual, which also reports any real error.
bool parse_deferring(const SourceFile& source, uint64_t size, size_t threshold, onnx::ModelProto& out);

}  // namespace bnorm

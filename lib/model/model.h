// bnorm::Model: an ONNX model as read from disk, and its I/O.
//
// Loading keeps every field of the ModelProto (protobuf keeps unknown
// fields too), so saving an unchanged model gives the same ModelProto.
// External data stays in its side files until a tensor is decoded, and so
// does the raw_data of large initializers of the main graph (deferred.h):
// a loaded model holds its structure and small tensors only.
// Saving goes through the one writer (output_file.h): a file is written
// unnamed next to its target and named when complete; a stream (stdout, a
// FIFO, a device) is written directly. On any error nothing is left behind
// and the input is never touched.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/output_file.h"

namespace bnorm {

class SourceFile;

// Newest IR version this build reads: 13 (ONNX 1.23's onnx.proto; 14 is
// unpublished). ONNX 1.12 writes 8. Fields newer than ONNX 1.12's protobuf
// (IR 10's and 11's additions) are kept by protobuf as unknown fields, byte
// for byte, and written back unchanged. IR 12's FLOAT8E8M0 and IR 13's
// UINT2 and INT2 are held (model/tensor.h); element types past IR 13 are
// refused by name where a model uses them.
inline constexpr int64_t kNewestIrVersion = 13;

struct Model {
  onnx::ModelProto proto;
  std::filesystem::path path;  // the file it was read from (or last saved to)
  std::shared_ptr<SourceFile> source;  // keeps the file deferred tensors read from open
  // The model was read with external data: it is saved with external data
  // too, even when a transform brought every large tensor into memory.
  bool external_on_save = false;

  // New bytes for tensors whose data is not in memory (deferred or external
  // data), computed while the model is saved (one tensor in memory at a
  // time) instead of now: by stored_data_key(). Only for tensors nothing
  // reads before the save: decoding such a tensor still gives its stored bytes.
  using Rewrite = std::function<void(std::vector<uint8_t>& bytes)>;
  std::map<std::string, Rewrite> rewrites;

  // The directory external data locations are relative to.
  std::filesystem::path dir() const;
  // Any initializer or tensor attribute, in any graph, stored externally.
  bool has_external_data() const;
};

// Reads `path`; "-" reads standard input. A stream (stdin, a FIFO, a
// process substitution) is first copied to an unnamed temporary file in
// $TMPDIR (nothing is left behind), and its external data resolves against
// the current folder. Throws Error(input) naming the file when it is missing, a
// directory, empty, not a protobuf ModelProto, has no graph, or is not a
// valid model (validate_model in model/validate.h: tensors, graphs,
// normalization nodes; external data is checked, not read). The raw_data
// of main-graph initializers of at least `defer_threshold` bytes stays in
// the file (deferred.h); 0 loads everything.
inline constexpr size_t kDeferThreshold = 64 << 10;
Model load_model(const std::filesystem::path& path, size_t defer_threshold = kDeferThreshold);

// The key in Model::rewrites of a tensor whose data is deferred or in
// external data (where its bytes are stored).
std::string stored_data_key(const onnx::TensorProto& t);

// decode_tensor(t, m.dir()), through m's rewrite of t if it has one: the
// tensor as saving `m` would write it.
struct Tensor;
Tensor decode_as_saved(const Model& m, const onnx::TensorProto& t);

// Parses bytes already in memory (fuzzing, tests). `name` is used in errors.
Model parse_model(const std::string& bytes, const std::string& name);

struct SaveOptions {
  // Side file for external data, relative to the output's directory;
  // empty: "<output file name>.data".
  std::string external_data_name;
  // When the model has external data, inline tensors of at least this many
  // bytes (new weights written by a transform) go to the side file too.
  size_t external_threshold = 1024;
};

// Writes `model` to `out` (plan_output). When the model has external data,
// every external tensor is copied, one at a time, into one side file next
// to the file written (a symlink's target) and the tensors' entries are
// rewritten to point at it; `model` is then bound to it (model.path). A
// stream gets one self-contained model: every tensor inline (protobuf's
// 2 GiB limit applies), no side file (--external-data is refused), and
// `model` is left as it was.
void save_model(Model& model, const OutputTarget& out, const SaveOptions& options = {});
void save_model(Model& model, const std::filesystem::path& out, const SaveOptions& options = {});

// Refuses (Error(usage)) an output that would overwrite what `model` was
// read from: its own file, or one of its external data files, whether
// named by `out` or by the side file the save would write. Also refuses a
// side file that is `out` itself. save_model calls it; commands call it
// before any work, to fail early. Paths are compared as files (links and
// different spellings of one file are the same file).
void check_output_path(const Model& model, const OutputTarget& out, const SaveOptions& options = {});
void check_output_path(const Model& model, const std::filesystem::path& out, const SaveOptions& options = {});

// The default-domain ("" or "ai.onnx") opset of the model. Models with no
// opset_import at all (IR 1 and 2, e.g. PyTorch 0.2 exports) mean opset 1.
// Throws Error(input) if the model imports the default domain twice.
int64_t default_opset(const onnx::ModelProto& m);

// Sets the default-domain opset to `opset`: the import of "" or "ai.onnx"
// keeps its spelling and gets the version; a model without one gets
// {domain: "", version: opset}, the domain written (as ONNX's helpers and
// exporters write it).
void set_default_opset(onnx::ModelProto& m, int64_t opset);

// Calls f(TensorProto&) for every initializer and tensor-valued attribute
// in the model's graphs (subgraphs included) and functions.
template <typename F>
void for_each_tensor(onnx::ModelProto& m, F&& f);

}  // namespace bnorm

#include "model/model_walk.h"

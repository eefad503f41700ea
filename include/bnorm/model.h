// Models in and out: the front door's first half (docs/api.md).
//
//   auto model = bnorm::api::load("model.onnx");
//   bnorm::api::save(*model, "out.onnx");
//
// A Model is opaque: what bnorm loaded, validated, with its large tensors
// left in their file until something reads them (so a copy is cheap).
#pragma once

#include <bnorm/error.h>

#include <memory>
#include <string>

namespace bnorm {

struct Model;  // its definition is the library's

namespace api {

using ModelPtr = std::shared_ptr<Model>;

// Reads a model file as every bnorm command does ("-": standard input; a
// FIFO or other stream is copied to an unnamed temporary file first): the
// model is validated (tensors, graphs, normalization nodes) and its
// external data resolves against its folder. Throws Error naming the file.
ModelPtr load(const std::string& path);

// A model from its serialized bytes (what onnx.ModelProto.SerializeToString()
// gives). `name` names it in errors and reports; external data, if any,
// resolves against `dir` (empty: the current folder).
ModelPtr load_bytes(const std::string& bytes, const std::string& name = "<bytes>", const std::string& dir = "");

// A copy of `model` (its structure; large tensors are read from the same file).
ModelPtr copy(const Model& model);

struct WriteOptions {
  // The side file of a model with external data, relative to the output's
  // folder (default: OUTPUT.data). Refused for a stream output.
  std::string external_data;
};

// Writes `model` to `path` through bnorm's one writer (docs/cli.md, "Inputs
// and outputs"): a file is written unnamed and named only when complete,
// keeping a replaced file's mode; a symlink's target is written; "-", a
// FIFO, a character device or a socket are written as a stream, every
// tensor inline. Refuses to write over the model's own file or its external
// data. Throws Error naming the output.
void save(Model& model, const std::string& path, const WriteOptions& options = {});

// The serialized model, every tensor inline (protobuf's 2 GiB limit applies).
std::string to_bytes(const Model& model);

// The ai.onnx opset the model imports (1 when it imports none) and its IR version.
long long opset(const Model& model);
long long ir_version(const Model& model);

}  // namespace api
}  // namespace bnorm

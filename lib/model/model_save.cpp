// Writing a model (see model.h): save_model and check_output_path. The
// main graph's deferred initializers are streamed from their source file (or
// computed by their rewrite) one at a time; external data goes to a side
// file written beside the output; both files appear only when complete
// (OutputFile), and a tensor changed on the way is put back if the save
// fails. A stream (stdout, a FIFO) gets one self-contained model: external
// data is written inline. Loading is in model.cpp.
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <optional>
#include <set>
#include <system_error>

#include "core/error.h"
#include "model/deferred.h"
#include "model/external_data.h"
#include "model/model.h"
#include "model/output_file.h"
#include "model/tensor_proto.h"

namespace fs = std::filesystem;
namespace pbio = google::protobuf::io;

namespace bnorm {

namespace {

// Moves every external tensor (and, when the model already had external
// data, every large inline tensor) into `side`, one tensor at a time.
// What write_external changed in a tensor, to put back if the save fails:
// the raw_data string is moved, not copied; a tensor stored in typed fields
// is kept whole.
struct TensorUndo {
  onnx::TensorProto* tensor;
  std::string raw;
  google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto> external;
  int location;
  std::optional<onnx::TensorProto> typed;
};

void undo_all(std::vector<TensorUndo>& undo) {
  for (auto& u : undo) {
    if (u.typed) {
      *u.tensor = std::move(*u.typed);
      continue;
    }
    u.tensor->mutable_raw_data()->swap(u.raw);
    u.tensor->mutable_external_data()->Swap(&u.external);
    u.tensor->set_data_location(static_cast<onnx::TensorProto_DataLocation>(u.location));
    if (u.location == onnx::TensorProto_DataLocation_DEFAULT) u.tensor->clear_data_location();
  }
}

void write_external(Model& model, const fs::path& src_dir, OutputFile& side, const std::string& side_name,
                    size_t threshold, std::vector<TensorUndo>& undo) {
  constexpr uint64_t kAlign = 64;
  const std::string zeros(kAlign, '\0');
  for_each_tensor(model.proto, [&](onnx::TensorProto& t) {
    std::vector<uint8_t> bytes;
    if (is_deferred(t)) {
      bytes = read_deferred(t);
      if (auto it = model.rewrites.find(stored_data_key(t)); it != model.rewrites.end()) it->second(bytes);
    } else if (is_external(t)) {
      bytes = read_external(src_dir, external_ref(t), -1, t.name());
      if (auto it = model.rewrites.find(stored_data_key(t)); it != model.rewrites.end()) it->second(bytes);
    } else if (t.has_raw_data() && t.raw_data().size() >= threshold) {
      bytes.assign(t.raw_data().begin(), t.raw_data().end());
    } else if (!t.has_raw_data() && t.data_type() != onnx::TensorProto::STRING) {
      // Typed-field storage: canonical raw form first, then decide.
      // Through encode_tensor: its raw_data is the stored form (4-bit types
      // packed two to a byte), not the unpacked bytes a Tensor holds.
      const std::string raw = to_proto(decode_tensor(t, src_dir)).raw_data();
      if (raw.size() < threshold) return;
      bytes.assign(raw.begin(), raw.end());
      undo.push_back({&t, {}, {}, 0, t});
      t.clear_float_data();
      t.clear_double_data();
      t.clear_int32_data();
      t.clear_int64_data();
      t.clear_uint64_data();
    } else {
      return;
    }
    const uint64_t pad = (kAlign - side.size() % kAlign) % kAlign;
    side.write(zeros.data(), pad);
    const uint64_t offset = side.size();
    side.write(bytes.data(), bytes.size());
    if (undo.empty() || undo.back().tensor != &t) {
      undo.push_back({&t, {}, {}, t.data_location(), std::nullopt});
      undo.back().raw.swap(*t.mutable_raw_data());
      undo.back().external.Swap(t.mutable_external_data());
    }
    t.clear_raw_data();
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", side_name);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes.size()));
  });
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

// The stored bytes of a deferred or external tensor, through its rewrite.
std::vector<uint8_t> stored_bytes(const Model& model, const onnx::TensorProto& t) {
  std::vector<uint8_t> bytes = is_deferred(t) ? read_deferred(t) : read_external(model.dir(), external_ref(t), -1, t.name());
  if (auto it = model.rewrites.find(stored_data_key(t)); it != model.rewrites.end()) it->second(bytes);
  return bytes;
}

// A deferred tensor anywhere but among the main graph's initializers (a
// transform copied it there) gets its bytes back in memory; so does, with
// `inline_external`, an external one there (a model written to a stream).
void materialize_stray(Model& model, bool inline_external) {
  std::set<const onnx::TensorProto*> top;
  for (const auto& t : model.proto.graph().initializer()) top.insert(&t);
  for_each_tensor(model.proto, [&](onnx::TensorProto& t) {
    if (top.count(&t) || !(is_deferred(t) || (inline_external && is_external(t)))) return;
    const std::vector<uint8_t> bytes = stored_bytes(model, t);
    t.clear_external_data();
    t.clear_data_location();
    t.set_raw_data(bytes.data(), bytes.size());
  });
}

// The length of a main-graph initializer's stored bytes (deferred or external).
uint64_t stored_length(const Model& model, const onnx::TensorProto& t) {
  if (is_deferred(t)) return static_cast<uint64_t>(deferred_ref(t).length);
  const ExternalRef ref = external_ref(t);
  if (ref.length >= 0) return static_cast<uint64_t>(ref.length);
  const fs::path file = check_external(model.dir(), ref, -1, t.name());
  return fs::file_size(file) - static_cast<uint64_t>(ref.offset);
}

// Writes the model with the main graph's initializers last in the graph
// (protobuf reads fields in any order; repeated ones keep theirs), each
// deferred one streamed from its source file (or computed by its rewrite)
// one at a time; with `inline_external`, each external one read from its
// side file one at a time and written inline.
void write_streaming(Model& model, OutputFile& out, bool inline_external) {
  // The model without the main graph's initializers (a small copy), then them.
  std::string head, graph_rest;
  {
    auto* inits = model.proto.mutable_graph()->mutable_initializer();
    google::protobuf::RepeatedPtrField<onnx::TensorProto> held;
    held.Swap(inits);
    struct PutBack {
      google::protobuf::RepeatedPtrField<onnx::TensorProto>* to;
      google::protobuf::RepeatedPtrField<onnx::TensorProto>* from;
      ~PutBack() { to->Swap(from); }
    } put_back{inits, &held};
    graph_rest = model.proto.graph().SerializeAsString();
    onnx::ModelProto shell = model.proto;
    shell.clear_graph();
    head = shell.SerializeAsString();
  }
  const onnx::ModelProto& m = model.proto;
  // Each initializer: its bytes without data (deferred) or whole (others).
  struct Piece {
    std::string bytes;
    const onnx::TensorProto* deferred = nullptr;
    uint64_t data_length = 0;
    uint64_t message_length = 0;
  };
  std::vector<Piece> pieces;
  uint64_t graph_length = graph_rest.size();
  for (const auto& t : m.graph().initializer()) {
    Piece p;
    if (is_deferred(t) || (inline_external && is_external(t))) {
      onnx::TensorProto meta = t;
      meta.clear_external_data();
      meta.clear_data_location();
      p.bytes = meta.SerializeAsString();
      p.deferred = &t;
      p.data_length = stored_length(model, t);
      p.message_length = p.bytes.size() + 1 + varint_size(p.data_length) + p.data_length;
    } else {
      p.bytes = t.SerializeAsString();
      p.message_length = p.bytes.size();
    }
    graph_length += 1 + varint_size(p.message_length) + p.message_length;
    pieces.push_back(std::move(p));
  }
  const uint64_t total = head.size() + 1 + varint_size(graph_length) + graph_length;
  if (total > static_cast<uint64_t>(INT_MAX)) {
    throw Error(ErrorKind::unsupported, "the model is larger than protobuf's 2 GiB limit",
                "keep large weights in external data");
  }
  std::vector<uint8_t> bytes;  // one rewritten tensor at a time, its buffer reused
  std::string prefix = head;
  prefix.push_back(static_cast<char>((7 << 3) | 2));
  put_varint(prefix, graph_length);
  out.write(prefix);
  out.write(graph_rest);
  for (const auto& p : pieces) {
    std::string tag(1, static_cast<char>((5 << 3) | 2));
    put_varint(tag, p.message_length);
    out.write(tag);
    out.write(p.bytes);
    if (!p.deferred) continue;
    std::string data_tag(1, static_cast<char>((9 << 3) | 2));
    put_varint(data_tag, p.data_length);
    out.write(data_tag);
    auto it = model.rewrites.find(stored_data_key(*p.deferred));
    if (it == model.rewrites.end() && is_deferred(*p.deferred)) {
      read_deferred_chunks(*p.deferred, [&](const char* d, size_t n) { out.write(d, n); });
      continue;
    }
    if (is_deferred(*p.deferred)) {
      read_deferred_into(*p.deferred, bytes);
      it->second(bytes);
    } else {
      bytes = stored_bytes(model, *p.deferred);
    }
    if (bytes.size() != p.data_length) {
      throw Error(ErrorKind::unsupported, fmt::format("tensor '{}': rewritten to {} bytes, was {}", p.deferred->name(),
                                                   bytes.size(), p.data_length));
    }
    out.write(bytes.data(), bytes.size());
  }
}

bool has_stored(const onnx::ModelProto& m, bool external) {
  for (const auto& t : m.graph().initializer())
    if (is_deferred(t) || (external && is_external(t))) return true;
  return false;
}

void write_proto(const onnx::ModelProto& proto, OutputFile& out) {
  if (proto.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    throw Error(ErrorKind::unsupported, "the model is larger than protobuf's 2 GiB limit",
                "keep large weights in external data");
  }
  pbio::FileOutputStream stream(out.fd());
  if (!proto.SerializeToZeroCopyStream(&stream) || !stream.Flush()) {
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': {}", out.target().given,
                                              std::generic_category().message(stream.GetErrno())));
  }
  out.count_written(static_cast<uint64_t>(stream.ByteCount()));
}

}  // namespace

namespace {

// The same file: equivalent when both exist, else the same path once
// symlinks and "." / ".." are resolved.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

std::string side_file_name(const OutputTarget& out, const SaveOptions& options) {
  return options.external_data_name.empty() ? out.path.filename().string() + ".data" : options.external_data_name;
}

void check_output_sources(const Model& model, const OutputTarget& out, const SaveOptions& options) {
  const char* hint = "write to another file; bnorm never modifies its input";
  if (out.is_stream()) {
    if (!options.external_data_name.empty()) {
      throw Error(ErrorKind::usage,
                  fmt::format("--external-data: a model written to {} has no side file", out.what),
                  "its external data is written inline; drop --external-data");
    }
    return;
  }
  if (!model.path.empty() && same_file(out.path, model.path)) {
    throw Error(ErrorKind::usage, "the output is the input model itself", hint);
  }
  if (!options.external_data_name.empty()) {
    // Checked even when nothing will go there, so a bad name is always refused.
    resolve_external_location(out.dir(), options.external_data_name);
  }
  std::vector<fs::path> sources;
  for_each_tensor(const_cast<onnx::ModelProto&>(model.proto), [&](onnx::TensorProto& t) {
    if (!is_external(t) || is_deferred(t)) return;
    try {
      sources.push_back(resolve_external_location(model.dir(), external_ref(t).location));
    } catch (const Error&) {
      // Refused when read; nothing of it can be overwritten here.
    }
  });
  const bool side = !sources.empty();
  const fs::path side_path = out.dir() / side_file_name(out, options);
  if (side && same_file(side_path, out.path)) {
    throw Error(ErrorKind::usage,
                fmt::format("the external data file '{}' would be the output model itself", side_path.string()),
                "give --external-data another name");
  }
  for (const auto& src : sources) {
    if (same_file(out.path, src)) {
      throw Error(ErrorKind::usage, fmt::format("the output is the external data file '{}' of the input", src.string()),
                  hint);
    }
    if (side && same_file(side_path, src)) {
      throw Error(ErrorKind::usage,
                  fmt::format("the external data file '{}' is one the input reads its external data from",
                              side_path.string()),
                  "give --external-data another name, or write to another directory");
    }
  }
}

// One self-contained model to a stream: external data inline. Works on a
// copy (the structure only: stored bytes stay where they are), so `model`
// is unchanged whatever happens.
void save_to_stream(const Model& model, const OutputTarget& out) {
  Model copy = model;
  materialize_stray(copy, true);
  OutputFile file(out);
  if (has_stored(copy.proto, true)) write_streaming(copy, file, true);
  else write_proto(copy.proto, file);
  file.commit();
}

}  // namespace

void check_output_path(const Model& model, const OutputTarget& out, const SaveOptions& options) {
  try {
    check_output_sources(model, out, options);
  } catch (Error& e) {
    e.in_file(out.given);
    throw;
  }
}

void save_model(Model& model, const OutputTarget& out, const SaveOptions& options) {
  try {
    check_output_path(model, out, options);
    if (out.is_stream()) {
      save_to_stream(model, out);
      return;
    }
    if (!model.external_on_save && !model.has_external_data()) {
      OutputFile file(out);
      materialize_stray(model, false);
      if (has_stored(model.proto, false)) write_streaming(model, file, false);
      else write_proto(model.proto, file);
      file.commit();
      model.path = out.path;
      return;
    }
    // Beside the file written: a symlinked output's side file goes beside
    // the link's target, where the model's relative location points.
    const std::string side_name = side_file_name(out, options);
    OutputTarget side_target;
    side_target.given = resolve_external_location(out.dir(), side_name).string();
    side_target.path = side_target.given;
    // If writing fails half-way, the tensors moved so far are put back.
    std::vector<TensorUndo> undo;
    try {
      OutputFile side(side_target);
      write_external(model, model.dir(), side, side_name, options.external_threshold, undo);
      OutputFile file(out);
      write_proto(model.proto, file);
      OutputFile::commit_all({&side, &file});
    } catch (...) {
      undo_all(undo);
      throw;
    }
    model.path = out.path;
  } catch (Error& e) {
    e.in_file(out.given);
    throw;
  }
}

void check_output_path(const Model& model, const fs::path& out, const SaveOptions& options) {
  check_output_path(model, plan_output(out.string()), options);
}

void save_model(Model& model, const fs::path& out, const SaveOptions& options) {
  save_model(model, plan_output(out.string()), options);
}

}  // namespace bnorm

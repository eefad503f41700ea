// Reading a model (see model.h): load_model and parse_model, with the
// checks every loaded model passes, and the opset a model defaults to.
// Initializers of defer_threshold bytes or more stay in the file
// (deferred.h). Writing is in model_save.cpp.
#include "model/model.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <system_error>

#include "core/error.h"
#include "model/deferred.h"
#include "model/external_data.h"
#include "model/tensor_proto.h"
#include "model/validate.h"

namespace fs = std::filesystem;
namespace pbio = google::protobuf::io;

namespace bnorm {

namespace {

// Newest IR version this build knows (ONNX 1.12 writes 8; 9 and 10 add
// float8 / int4 types that bnorm passes through untouched).
constexpr int64_t kNewestIrVersion = 10;

void check_parsed(const onnx::ModelProto& m, const std::string& name) {
  if (!m.has_graph()) {
    const bool looks_like_tensor = m.GetReflection()->GetUnknownFields(m).field_count() > 0;
    throw Error(ErrorKind::input, "not an ONNX model: it has no graph",
                looks_like_tensor ? "is this a tensor (.pb) rather than a model?" : "");
  }
  if (m.ir_version() > kNewestIrVersion) {
    throw Error(ErrorKind::input, fmt::format("IR version {} is newer than bnorm knows ({})", m.ir_version(),
                                              kNewestIrVersion));
  }
  default_opset(m);  // rejects a doubled default-domain import
  (void)name;
}

// The deferred-data key is bnorm's own: a file that carries it is refused.
void refuse_reserved_keys(onnx::ModelProto& m) {
  for_each_tensor(m, [](onnx::TensorProto& t) {
    if (is_deferred(t)) {
      throw Error(ErrorKind::input,
                  fmt::format("tensor '{}': external_data key '{}' is reserved for bnorm", t.name(), kDeferredKey));
    }
  });
}

Model parse_stream(pbio::ZeroCopyInputStream& raw, const std::string& name) {
  Model model;
  pbio::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(INT_MAX);
  if (!model.proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    throw Error(ErrorKind::input, "not an ONNX model: the protobuf data is invalid or truncated");
  }
  refuse_reserved_keys(model.proto);
  check_parsed(model.proto, name);
  return model;
}

}  // namespace

fs::path Model::dir() const {
  const fs::path d = path.parent_path();
  return d.empty() ? fs::path(".") : d;
}

bool Model::has_external_data() const {
  bool any = false;
  for_each_tensor(const_cast<onnx::ModelProto&>(proto),
                  [&](onnx::TensorProto& t) { any = any || (is_external(t) && !is_deferred(t)); });
  return any;
}

std::string stored_data_key(const onnx::TensorProto& t) {
  if (is_deferred(t)) {
    const DeferredRef r = deferred_ref(t);
    return fmt::format("deferred:{}:{}", r.source, r.offset);
  }
  const ExternalRef r = external_ref(t);
  return fmt::format("external:{}:{}", r.location, r.offset);
}

Tensor decode_as_saved(const Model& m, const onnx::TensorProto& t) {
  Tensor out = decode_tensor(t, m.dir());
  if (m.rewrites.empty() || !is_external(t)) return out;
  auto it = m.rewrites.find(stored_data_key(t));
  if (it != m.rewrites.end()) it->second(out.bytes);
  return out;
}

Model load_model(const fs::path& path, size_t defer_threshold) {
  try {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw Error(ErrorKind::input, "no such file");
    if (fs::is_directory(status)) throw Error(ErrorKind::input, "is a directory, not a model file");
    if (!fs::is_regular_file(status)) throw Error(ErrorKind::input, "is not a regular file");
    const uint64_t size = fs::file_size(path, ec);
    if (size == 0) throw Error(ErrorKind::input, "is empty");
    if (defer_threshold > 0) {
      Model model;
      model.source = open_source(path);
      if (parse_deferring(*model.source, size, defer_threshold, model.proto)) {
        check_parsed(model.proto, path.string());
        bool any = false;
        for (const auto& t : model.proto.graph().initializer()) any = any || is_deferred(t);
        if (!any) model.source.reset();
        model.path = path;
        validate_model(model);
        model.external_on_save = model.has_external_data();
        return model;
      }
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorKind::input, fmt::format("cannot open: {}", std::generic_category().message(errno)));
    pbio::FileInputStream raw(fd);
    raw.SetCloseOnDelete(true);
    Model model = parse_stream(raw, path.string());
    model.path = path;
    validate_model(model);
    model.external_on_save = model.has_external_data();
    return model;
  } catch (Error& e) {
    e.in_file(path.string());
    throw;
  }
}

Model parse_model(const std::string& bytes, const std::string& name) {
  try {
    if (bytes.empty()) throw Error(ErrorKind::input, "is empty");
    pbio::ArrayInputStream raw(bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), INT_MAX)));
    Model model = parse_stream(raw, name);
    model.path = name;
    validate_model(model);
    return model;
  } catch (Error& e) {
    e.in_file(name);
    throw;
  }
}

int64_t default_opset(const onnx::ModelProto& m) {
  int64_t version = -1;
  for (const auto& op : m.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      if (version >= 0) throw Error(ErrorKind::input, "imports the default ONNX domain twice");
      version = op.version();
    }
  }
  // No import of the default domain (IR 1 and 2 models have no opset_import
  // at all): opset 1, the only one those IR versions knew.
  return version >= 0 ? version : 1;
}

}  // namespace bnorm

// Reading a model (see model.h): load_model and parse_model, with the
// checks every loaded model passes, and the opset a model defaults to.
// Initializers of defer_threshold bytes or more stay in the file
// (deferred.h). Writing is in model_save.cpp.
#include "model/model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <system_error>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "model/deferred.h"
#include "model/external_data.h"
#include "model/output_file.h"
#include "model/tensor_proto.h"
#include "model/validate.h"

namespace fs = std::filesystem;
namespace pbio = google::protobuf::io;

namespace bnorm {

namespace {


// Element types bnorm does not hold: those newer than IR 13.
const char* newer_type_name(int32_t elem_type) { return elem_type > 26 ? "unknown to IR 13" : nullptr; }

void refuse_newer_type(int32_t elem_type, const std::string& what) {
  if (const char* n = newer_type_name(elem_type)) {
    throw Error(ErrorKind::unsupported, fmt::format("{} has element type {} {}, which bnorm does not handle", what,
                                                    elem_type, n));
  }
}

void refuse_newer_types(const onnx::TypeProto& t, const std::string& what) {
  if (t.has_tensor_type()) refuse_newer_type(t.tensor_type().elem_type(), what);
  if (t.has_sparse_tensor_type()) refuse_newer_type(t.sparse_tensor_type().elem_type(), what);
  if (t.has_sequence_type()) refuse_newer_types(t.sequence_type().elem_type(), what);
  if (t.has_optional_type()) refuse_newer_types(t.optional_type().elem_type(), what);
}

void refuse_newer_types(const onnx::GraphProto& g) {
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
    for (const auto& v : *list) refuse_newer_types(v.type(), fmt::format("value '{}'", v.name()));
  }
  for (const auto& t : g.initializer()) refuse_newer_type(t.data_type(), fmt::format("initializer '{}'", t.name()));
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_t()) refuse_newer_type(a.t().data_type(), fmt::format("node '{}' attribute '{}'", n.name(), a.name()));
      if (a.name() == "to" && a.type() == onnx::AttributeProto::INT && n.op_type().rfind("Cast", 0) == 0) {
        refuse_newer_type(static_cast<int32_t>(a.i()), fmt::format("node '{}' ({}) target 'to'", n.name(), n.op_type()));
      }
      if (a.has_g()) refuse_newer_types(a.g());
      for (const auto& sg : a.graphs()) refuse_newer_types(sg);
    }
  }
}

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
  refuse_newer_types(m.graph());
  (void)name;
}

// A declared dim of -1 is an unknown dim (as ONNX's checker and onnxruntime
// read it): cleared here, so every command sees a dim with neither value
// nor name. A saved model writes it as such (docs/semantics.md).
void clear_minus_one_dims(onnx::TypeProto& t) {
  if (t.has_tensor_type() && t.tensor_type().has_shape()) {
    for (auto& d : *t.mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_value() && d.dim_value() == -1) d.clear_dim_value();
    }
  }
  if (t.has_sequence_type()) clear_minus_one_dims(*t.mutable_sequence_type()->mutable_elem_type());
  if (t.has_optional_type()) clear_minus_one_dims(*t.mutable_optional_type()->mutable_elem_type());
}

void clear_minus_one_dims(onnx::GraphProto& g) {
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()}) {
    for (auto& v : *list) {
      if (v.has_type()) clear_minus_one_dims(*v.mutable_type());
    }
  }
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) clear_minus_one_dims(*a.mutable_g());
      for (auto& sg : *a.mutable_graphs()) clear_minus_one_dims(sg);
    }
  }
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
  clear_minus_one_dims(*model.proto.mutable_graph());
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

namespace {

// Reads the model in the regular file open as `fd` (taken), from offset 0.
// `reopen` is a path of the same file ("" for an unnamed one).
Model load_fd(int fd, const fs::path& path, const std::string& name, const std::string& reopen,
              size_t defer_threshold) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(ErrorKind::input, fmt::format("cannot read: {}", std::generic_category().message(errno)));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    throw Error(ErrorKind::input, "is empty");
  }
  std::shared_ptr<SourceFile> source = adopt_source(fd, name, reopen);
  if (defer_threshold > 0) {
    Model model;
    model.source = source;
    if (parse_deferring(*model.source, size, defer_threshold, model.proto)) {
      check_parsed(model.proto, name);
      clear_minus_one_dims(*model.proto.mutable_graph());
      bool any = false;
      for (const auto& t : model.proto.graph().initializer()) any = any || is_deferred(t);
      if (!any) model.source.reset();
      model.path = path;
      validate_model(model);
      model.external_on_save = model.has_external_data();
      return model;
    }
  }
  const int own = ::dup(source_fd(*source));
  if (own < 0 || ::lseek(own, 0, SEEK_SET) != 0) {
    if (own >= 0) ::close(own);
    throw Error(ErrorKind::input, fmt::format("cannot read: {}", std::generic_category().message(errno)));
  }
  pbio::FileInputStream raw(own);
  raw.SetCloseOnDelete(true);
  Model model = parse_stream(raw, name);
  model.path = path;
  validate_model(model);
  model.external_on_save = model.has_external_data();
  return model;
}

// A stream's bytes copied into an unnamed scratch file, open at offset 0.
int spool(int in, const std::string& name) {
  const int fd = scratch_file(fmt::format("to hold the model read from {}", name));
  progress::Phase phase("reading " + name, 0, progress::Unit::bytes);
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(ErrorKind::input, fmt::format("read error: {}", std::generic_category().message(err)));
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(fd, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        const int err = errno;
        ::close(fd);
        throw Error(ErrorKind::input, fmt::format("cannot copy it to a temporary file in '{}' (TMPDIR): {}",
                                                  scratch_dir(), std::generic_category().message(err)));
      }
      done += w;
    }
    phase.advance(static_cast<uint64_t>(n));
  }
  return fd;
}

// "-" (stdin), a FIFO, a character device or a socket: read as a stream.
// A stdin that is a regular file at its start is read in place.
Model load_stream(const fs::path& path, const std::string& name, size_t defer_threshold) {
  const bool stdin_given = path == "-";
  const int in = stdin_given ? ::dup(0) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw Error(ErrorKind::input, fmt::format("cannot open: {}", std::generic_category().message(errno)));
  struct stat st {};
  if (::fstat(in, &st) == 0 && S_ISREG(st.st_mode) && ::lseek(in, 0, SEEK_CUR) == 0) {
    return load_fd(in, path, name, "", defer_threshold);
  }
  int fd = -1;
  try {
    fd = spool(in, name);
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
  return load_fd(fd, path, name, "", defer_threshold);
}

// Any path: "-", a stream, or a regular file.
Model load_any(const fs::path& path, const std::string& name, size_t defer_threshold) {
  if (path == "-") return load_stream(path, name, defer_threshold);
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw Error(ErrorKind::input, "no such file");
  if (fs::is_directory(status)) throw Error(ErrorKind::input, "is a directory, not a model file");
  if (status.type() == fs::file_type::fifo || status.type() == fs::file_type::character ||
      status.type() == fs::file_type::socket) {
    return load_stream(path, name, defer_threshold);
  }
  if (!fs::is_regular_file(status)) throw Error(ErrorKind::input, "is not a regular file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::input, fmt::format("cannot open: {}", std::generic_category().message(errno)));
  return load_fd(fd, path, name, path.string(), defer_threshold);
}

void log_loaded(const Model& m, const std::string& name, const Stopwatch& took) {
  if (!log().should_log(spdlog::level::debug)) return;
  log().debug("read {}: IR {}, opset {}, {} nodes in the main graph, {} initializers ({:.1f} ms)", name,
              m.proto.ir_version(), default_opset(m.proto), m.proto.graph().node_size(),
              m.proto.graph().initializer_size(), took.ms());
}

}  // namespace

Model load_model(const fs::path& path, size_t defer_threshold) {
  const std::string name = path == "-" ? "<stdin>" : path.string();
  const Stopwatch took;
  progress::Phase phase("reading " + name, 0, progress::Unit::bytes);
  try {
    Model m = load_any(path, name, defer_threshold);
    log_loaded(m, name, took);
    return m;
  } catch (Error& e) {
    e.in_file(name);
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

void set_default_opset(onnx::ModelProto& m, int64_t opset) {
  for (auto& op : *m.mutable_opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      op.set_version(opset);
      return;
    }
  }
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
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

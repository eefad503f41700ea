#include "model/deferred.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <system_error>

#include "core/error.h"
#include "model/buffer_pool.h"

namespace bnorm {

class SourceFile {
 public:
  SourceFile(int fd, int64_t id, std::string name, std::string path)
      : fd_(fd), id_(id), name_(std::move(name)), path_(std::move(path)) {}
  ~SourceFile() { ::close(fd_); }
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;

  int fd() const { return fd_; }
  int64_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  int64_t id_;
  std::string name_;  // for messages
  std::string path_;  // a path that opens it
};

namespace {

struct Registry {
  std::mutex mu;
  int64_t next = 1;
  std::map<int64_t, std::weak_ptr<SourceFile>> files;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::shared_ptr<SourceFile> find_source(int64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.files.find(id);
  return it == r.files.end() ? nullptr : it->second.lock();
}

int64_t parse_entry(const std::string& value, const char* key, const std::string& tensor) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || v < 0) {
    throw Error(ErrorKind::input, fmt::format("tensor '{}': deferred data entry {} = '{}' is not valid", tensor, key, value));
  }
  return v;
}

// Reads [from, from + n) of the tensor's bytes into `dst`.
void read_range(const onnx::TensorProto& t, const SourceFile& src, const DeferredRef& ref, int64_t from, int64_t n,
                char* dst) {
  int64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(src.fd(), dst + done, static_cast<size_t>(n - done), ref.offset + from + done);
    if (got <= 0) {
      throw Error(ErrorKind::input, fmt::format("tensor '{}': cannot read its {} bytes from '{}': {}", t.name(),
                                                ref.length, src.name(),
                                                got == 0 ? "the file is shorter" : std::generic_category().message(errno)));
    }
    done += got;
  }
}

std::shared_ptr<SourceFile> make_source(int fd, const std::string& name, const std::string& path) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.files.begin(); it != r.files.end();) it = it->second.expired() ? r.files.erase(it) : std::next(it);
  auto f = std::make_shared<SourceFile>(fd, r.next++, name, path);
  r.files[f->id()] = f;
  return f;
}

std::shared_ptr<SourceFile> source_of(const onnx::TensorProto& t, const DeferredRef& ref) {
  auto src = find_source(ref.source);
  if (!src) throw Error(ErrorKind::input, fmt::format("tensor '{}': the model file it is read from is closed", t.name()));
  return src;
}

}  // namespace

std::shared_ptr<SourceFile> open_source(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::input, fmt::format("cannot open: {}", std::generic_category().message(errno)));
  return make_source(fd, path.string(), path.string());
}

std::shared_ptr<SourceFile> adopt_source(int fd, const std::string& name, const std::string& path) {
  // An unnamed file (a spooled stream) opens through /proc.
  return make_source(fd, name, path.empty() ? fmt::format("/proc/self/fd/{}", fd) : path);
}

int64_t source_id(const SourceFile& f) { return f.id(); }
int source_fd(const SourceFile& f) { return f.fd(); }

bool is_deferred(const onnx::TensorProto& t) {
  if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return false;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == kDeferredKey) return true;
  }
  return false;
}

std::string deferred_source_path(const onnx::TensorProto& t) {
  const auto src = find_source(deferred_ref(t).source);
  return src ? src->path() : std::string();
}

DeferredRef deferred_ref(const onnx::TensorProto& t) {
  DeferredRef ref;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == kDeferredKey) ref.source = parse_entry(kv.value(), kDeferredKey, t.name());
    else if (kv.key() == "offset") ref.offset = parse_entry(kv.value(), "offset", t.name());
    else if (kv.key() == "length") ref.length = parse_entry(kv.value(), "length", t.name());
  }
  if (ref.source < 0) throw Error(ErrorKind::input, fmt::format("tensor '{}' is not deferred", t.name()));
  return ref;
}

void set_deferred(onnx::TensorProto& t, const SourceFile& source, int64_t offset, int64_t length) {
  t.clear_raw_data();
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto add = [&](const char* k, int64_t v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(std::to_string(v));
  };
  // ONNX's checker wants a location for EXTERNAL data; nothing of bnorm's
  // reads it for a deferred tensor.
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value(kDeferredKey);
  add(kDeferredKey, source.id());
  add("offset", offset);
  add("length", length);
}

std::vector<uint8_t> read_deferred(const onnx::TensorProto& t) {
  std::vector<uint8_t> out = storage_for_overwrite(static_cast<size_t>(deferred_ref(t).length));
  read_deferred_into(t, out);
  return out;
}

void read_deferred_into(const onnx::TensorProto& t, std::vector<uint8_t>& out) {
  const DeferredRef ref = deferred_ref(t);
  const auto src = source_of(t, ref);
  out.resize(static_cast<size_t>(ref.length));
  read_range(t, *src, ref, 0, ref.length, reinterpret_cast<char*>(out.data()));
}

void read_deferred_chunks(const onnx::TensorProto& t, const std::function<void(const char*, size_t)>& f) {
  const DeferredRef ref = deferred_ref(t);
  const auto src = source_of(t, ref);
  constexpr int64_t kChunk = 4 << 20;
  thread_local std::vector<char> buf(kChunk);
  for (int64_t done = 0; done < ref.length; done += kChunk) {
    const int64_t n = std::min(kChunk, ref.length - done);
    read_range(t, *src, ref, done, n, buf.data());
    f(buf.data(), static_cast<size_t>(n));
  }
}

}  // namespace bnorm

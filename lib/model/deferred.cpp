#include "model/deferred.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <system_error>

#include "core/error.h"

namespace bnorm {

class SourceFile {
 public:
  SourceFile(int fd, int64_t id, std::string name) : fd_(fd), id_(id), name_(std::move(name)) {}
  ~SourceFile() { ::close(fd_); }
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;

  int fd() const { return fd_; }
  int64_t id() const { return id_; }
  const std::string& name() const { return name_; }

 private:
  int fd_;
  int64_t id_;
  std::string name_;
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

// Calls f(chunk pointer, size) over the tensor's bytes, read in pieces.
template <class F>
void read_chunks(const onnx::TensorProto& t, F&& f) {
  const DeferredRef ref = deferred_ref(t);
  const auto src = find_source(ref.source);
  if (!src) throw Error(ErrorKind::input, fmt::format("tensor '{}': the model file it is read from is closed", t.name()));
  constexpr int64_t kChunk = 4 << 20;
  std::vector<char> buf(static_cast<size_t>(std::min<int64_t>(kChunk, std::max<int64_t>(ref.length, 1))));
  int64_t done = 0;
  while (done < ref.length) {
    const int64_t want = std::min<int64_t>(ref.length - done, static_cast<int64_t>(buf.size()));
    const ssize_t got = ::pread(src->fd(), buf.data(), static_cast<size_t>(want), ref.offset + done);
    if (got <= 0) {
      throw Error(ErrorKind::input, fmt::format("tensor '{}': cannot read its {} bytes from '{}': {}", t.name(),
                                                ref.length, src->name(),
                                                got == 0 ? "the file is shorter" : std::generic_category().message(errno)));
    }
    f(buf.data(), static_cast<size_t>(got));
    done += got;
  }
}

}  // namespace

std::shared_ptr<SourceFile> open_source(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::input, fmt::format("cannot open: {}", std::generic_category().message(errno)));
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.files.begin(); it != r.files.end();) it = it->second.expired() ? r.files.erase(it) : std::next(it);
  auto f = std::make_shared<SourceFile>(fd, r.next++, path.string());
  r.files[f->id()] = f;
  return f;
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
  return src ? src->name() : std::string();
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
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(deferred_ref(t).length));
  read_chunks(t, [&](const char* p, size_t n) { out.insert(out.end(), p, p + n); });
  return out;
}

void read_deferred_chunks(const onnx::TensorProto& t, const std::function<void(const char*, size_t)>& f) {
  read_chunks(t, f);
}

}  // namespace bnorm

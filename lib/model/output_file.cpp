#include "model/output_file.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <system_error>

#include "core/error.h"

namespace fs = std::filesystem;

namespace bnorm {

namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

// "FILE: cannot write: why" (the file as the error's own, like every error about a file).
[[noreturn]] void cannot_write(const std::string& given, const std::string& why,
                               ErrorKind kind = ErrorKind::input) {
  Error e(kind, fmt::format("cannot write: {}", why));
  e.in_file(given == "-" ? "standard output" : given);
  throw e;
}

// Named temporary files of unfinished outputs. Its mutex also makes each
// commit one step as seen from remove_unfinished_outputs().
struct Pending {
  std::mutex mu;
  std::set<std::string> names;
};

Pending& pending() {
  static Pending* p = new Pending;  // never destroyed: the signal thread may use it during exit
  return *p;
}

// The lock on the registry and on every commit. remove_unfinished_outputs()
// takes it for good, so nothing is named after it.
std::unique_lock<std::mutex> lock_pending() { return std::unique_lock<std::mutex>(pending().mu); }

bool same_inode(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The file a chain of symlinks ends at (which need not exist).
fs::path final_target(const fs::path& given) {
  fs::path p = given;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::vector<char> buf(PATH_MAX + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) cannot_write(given.string(), errno_text(errno));
    const fs::path next(std::string(buf.data(), static_cast<size_t>(n)));
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  cannot_write(given.string(), "too many levels of symbolic links");
}

std::string stream_kind(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISSOCK(m)) return "a socket";
  return "a stream";
}

int open_stream(const OutputTarget& t) {
  struct stat st {};
  if (::stat(t.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = final_target(t.path).string();
    if (fd < 0 || path.size() >= sizeof(addr.sun_path)) {
      if (fd >= 0) ::close(fd);
      cannot_write(t.given, "cannot connect to the socket");
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      const int err = errno;
      ::close(fd);
      cannot_write(t.given, errno_text(err));
    }
    return fd;
  }
  int fd;
  do {
    fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) cannot_write(t.given, errno_text(errno));
  return fd;
}

std::string random_suffix() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  return fmt::format("{:x}{:x}{:x}", ::getpid(), rd(), counter++);
}

// Unnamed temporary files need O_TMPFILE and /proc to name them at the
// end. BNORM_TEST_NAMED_TEMP (tests only, docs/reliability.md) takes the
// fallback of filesystems without O_TMPFILE: a hidden, registered name.
bool proc_fd_available() {
  static const bool ok = ::access("/proc/self/fd", X_OK) == 0 && !std::getenv("BNORM_TEST_NAMED_TEMP");
  return ok;
}

}  // namespace

fs::path OutputTarget::dir() const {
  const fs::path d = path.parent_path();
  return d.empty() ? fs::path(".") : d;
}

OutputTarget plan_output(const std::string& given) {
  OutputTarget t;
  t.given = given;
  if (given.empty()) throw Error(ErrorKind::usage, "an output path is empty");
  struct stat out1 {}, out2 {};
  const bool has1 = ::fstat(1, &out1) == 0, has2 = ::fstat(2, &out2) == 0;
  if (given == "-") {
    if (!has1) cannot_write(given, "it is closed", ErrorKind::usage);
    t.kind = OutputTarget::Kind::stream;
    t.fd = 1;
    t.what = "standard output";
    return t;
  }
  struct stat st {};
  if (::stat(given.c_str(), &st) == 0) {
    if (has1 && same_inode(st, out1)) {
      t.kind = OutputTarget::Kind::stream;
      t.fd = 1;
      t.what = "standard output";
      return t;
    }
    if (has2 && same_inode(st, out2)) {
      t.kind = OutputTarget::Kind::stream;
      t.fd = 2;
      t.what = "standard error";
      return t;
    }
    if (S_ISDIR(st.st_mode)) cannot_write(given, "it is a directory", ErrorKind::usage);
    if (!S_ISREG(st.st_mode)) {
      if (S_ISBLK(st.st_mode)) {
        Error e(ErrorKind::usage, "cannot write: it is a block device",
                "bnorm writes to files, FIFOs, character devices, sockets and standard output");
        e.in_file(given);
        throw e;
      }
      t.kind = OutputTarget::Kind::stream;
      t.path = given;
      t.what = stream_kind(st.st_mode);
      return t;
    }
  }
  t.path = final_target(given);
  const fs::path dir = t.dir();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    cannot_write(given, fmt::format("directory '{}' does not exist", dir.string()), ErrorKind::usage);
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    cannot_write(given, errno_text(errno), ErrorKind::usage);
  }
  return t;
}

OutputFile::OutputFile(OutputTarget target, uint64_t expected)
    : target_(std::move(target)),
      phase_(std::make_unique<progress::Phase>("writing " + target_.given, expected, progress::Unit::bytes)) {
  if (target_.is_stream()) {
    if (target_.fd >= 0) {
      fd_ = target_.fd;
    } else {
      fd_ = open_stream(target_);
      owns_fd_ = true;
    }
    return;
  }
  const fs::path dir = target_.dir();
  struct stat st {};
  if (::stat(target_.path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) cannot_write(target_.given, "it is a directory");
    if (S_ISREG(st.st_mode)) {
      keep_stat_ = true;
      mode_ = st.st_mode & 07777;
      uid_ = st.st_uid;
      gid_ = st.st_gid;
    }
  }
  // Unnamed first; a hidden, registered name only where the filesystem
  // (or a missing /proc) gives no unnamed files.
  if (proc_fd_available()) {
    fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd_ >= 0) {
      owns_fd_ = true;
      return;
    }
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) cannot_write(target_.given, fmt::format("directory '{}' does not exist", dir.string()));
    if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL) cannot_write(target_.given, errno_text(err));
  }
  auto lock = lock_pending();
  std::string tmpl = (dir / ("." + target_.path.filename().string() + ".bnorm-XXXXXX")).string();
  fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd_ < 0) {
    if (errno == ENOENT || errno == ENOTDIR) cannot_write(target_.given, fmt::format("directory '{}' does not exist", dir.string()));
    cannot_write(target_.given, errno_text(errno));
  }
  owns_fd_ = true;
  temp_ = tmpl;
  named_temp_ = true;
  pending().names.insert(temp_.string());
}

OutputFile::~OutputFile() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  if (named_temp_ && !committed_) {
    auto lock = lock_pending();
    ::unlink(temp_.c_str());
    pending().names.erase(temp_.string());
  }
}

void OutputFile::write(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      cannot_write(target_.given, errno_text(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
    phase_->advance(static_cast<uint64_t>(w));
  }
}

// Gives an unnamed temporary file a hidden name in the target's folder
// (registered, so that an interrupt removes it) for the rename.
void OutputFile::link_temp_name() {
  if (named_temp_) return;
  for (int attempt = 0;; ++attempt) {
    temp_ = target_.dir() / ("." + target_.path.filename().string() + ".bnorm-" + random_suffix());
    const std::string proc = fmt::format("/proc/self/fd/{}", fd_);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp_.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
    if (errno != EEXIST || attempt > 8) cannot_write(target_.given, errno_text(errno));
  }
  named_temp_ = true;
  pending().names.insert(temp_.string());
}

void OutputFile::commit_all(const std::vector<OutputFile*>& files) {
  for (OutputFile* f : files) {
    if (f->target_.is_stream()) continue;
    // Written data on disk, then the mode it will keep.
    if (::fsync(f->fd_) != 0 && errno != EINVAL) cannot_write(f->target_.given, errno_text(errno));
    if (f->keep_stat_) {
      if (::fchown(f->fd_, f->uid_, f->gid_) != 0) {
        // Not allowed (another owner, not root): the file becomes ours.
      }
      ::fchmod(f->fd_, f->mode_);
    } else {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      ::fchmod(f->fd_, 0666 & ~mask);
    }
  }
  auto lock = lock_pending();
  std::vector<OutputFile*> done;
  try {
    for (OutputFile* f : files) {
      if (f->target_.is_stream()) continue;
      f->link_temp_name();
    }
    for (OutputFile* f : files) {
      if (f->target_.is_stream()) {
        f->committed_ = true;
        continue;
      }
      if (::rename(f->temp_.c_str(), f->target_.path.c_str()) != 0) cannot_write(f->target_.given, errno_text(errno));
      pending().names.erase(f->temp_.string());
      f->committed_ = true;
      done.push_back(f);
    }
  } catch (...) {
    for (OutputFile* f : done) {
      ::unlink(f->target_.path.c_str());
      f->committed_ = false;
      f->named_temp_ = false;
    }
    for (OutputFile* f : files) {
      if (f->named_temp_ && !f->committed_) {
        ::unlink(f->temp_.c_str());
        pending().names.erase(f->temp_.string());
        f->named_temp_ = false;
      }
    }
    throw;
  }
  for (OutputFile* f : files) {
    if (f->owns_fd_ && f->fd_ >= 0 && !f->target_.is_stream()) {
      ::close(f->fd_);
      f->fd_ = -1;
    }
    log().debug("wrote {}: {} bytes ({:.1f} ms)", f->target_.given, f->size_, f->took_.ms());
  }
}

void OutputFile::commit() {
  if (committed_) return;
  commit_all({this});
}

void OutputFile::undo_commit() {
  if (!committed_ || target_.is_stream()) return;
  ::unlink(target_.path.c_str());
  committed_ = false;
  named_temp_ = false;
}

void write_output(const OutputTarget& target, const std::string& text) {
  OutputFile f(target);
  f.write(text);
  f.commit();
}

std::string scratch_dir() {
  const char* env = std::getenv("TMPDIR");
  return env && *env ? env : "/tmp";
}

int scratch_file(const std::string& purpose) {
  const std::string dir = scratch_dir();
  int fd = -1;
  errno = EOPNOTSUPP;
  if (!std::getenv("BNORM_TEST_NAMED_TEMP")) fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
    auto lock = lock_pending();
    std::string path = dir + "/.bnorm-scratch-XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) {
      ::unlink(path.c_str());
      return fd;
    }
  }
  throw Error(ErrorKind::input,
              fmt::format("cannot create a temporary file in '{}' (TMPDIR) {}: {}", dir, purpose, errno_text(errno)));
}

void remove_unfinished_outputs() noexcept {
  Pending& p = pending();
  p.mu.lock();  // held until the process dies
  for (const auto& name : p.names) ::unlink(name.c_str());
  p.names.clear();
}

}  // namespace bnorm

#include "model/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.h"

namespace fs = std::filesystem;

namespace bnorm {

namespace {
std::string errno_text(int err) { return std::generic_category().message(err); }
}  // namespace

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
  fs::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': directory '{}' does not exist",
                                              target_.string(), dir.string()));
  }
  if (fs::is_directory(target_, ec)) {
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': it is a directory", target_.string()));
  }
  std::string tmpl = (dir / ("." + target_.filename().string() + ".bnorm-XXXXXX")).string();
  fd_ = mkstemp(tmpl.data());
  if (fd_ < 0) {
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': {}", target_.string(), errno_text(errno)));
  }
  temp_ = tmpl;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicFile::write(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::input, fmt::format("cannot write '{}': {}", target_.string(), errno_text(errno)));
    }
    p += w;
    n -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0 && errno != EINVAL) {
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': {}", target_.string(), errno_text(errno)));
  }
  // New files get the usual permissions (mkstemp creates 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': {}", target_.string(), errno_text(errno)));
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    throw Error(ErrorKind::input, fmt::format("cannot write '{}': {}", target_.string(), errno_text(errno)));
  }
  committed_ = true;
}

void AtomicFile::undo_commit() {
  if (!committed_) return;
  std::error_code ec;
  fs::remove(target_, ec);
  committed_ = false;
  temp_.clear();
}

}  // namespace bnorm

// Atomic file output: bytes go to a temporary file in the target's
// directory, which is renamed over the target only on commit(). Destroyed
// without commit() (an error was thrown), the temporary file is removed,
// so a failed command never leaves a partial or stale output behind.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace bnorm {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends; throws Error(input) on a write error (disk full, ...).
  void write(const void* data, size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  uint64_t size() const { return size_; }
  // Flushes, syncs and renames over the target.
  void commit();
  const std::filesystem::path& target() const { return target_; }
  // The open descriptor, for writers that stream (protobuf's FileOutputStream).
  // Bytes written through it are not counted by size().
  int fd() const { return fd_; }
  // Removes the committed target again (when a later, related write fails).
  void undo_commit();

 private:
  std::filesystem::path target_, temp_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool committed_ = false;
};

}  // namespace bnorm

// The one writer of every file bnorm writes: models and their external
// data, reports, tensors. An output is planned before any work
// (plan_output), then written (OutputFile).
//
// What each kind of path gets:
//   a new path, or a regular file   written to an unnamed temporary file in
//                                   its folder, named only when complete: it
//                                   replaces the file in one rename, keeping
//                                   the replaced file's mode (and owner when
//                                   allowed)
//   a symlink (a chain of them)     its final target, written as above; the
//                                   link stays a link
//   "-", or the file that is this   written directly, as a stream (stdout)
//   process's stdout or stderr
//   a FIFO, character device or     written directly, as a stream: never
//   socket (/dev/null, a pipe)      renamed over or replaced
//   a directory                     refused
//
// Interrupts: a temporary file has no name while it is written (O_TMPFILE;
// where the filesystem has none, a hidden name, registered), and gets one
// only inside commit(), so a process killed at any moment leaves nothing
// but what was complete. remove_unfinished_outputs() removes the few names
// that can exist (registered ones): the CLI calls it from its signal
// handling before it dies. The library installs no signal handler.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/progress.h"

namespace bnorm {

struct OutputTarget {
  enum class Kind { file, stream };
  Kind kind = Kind::file;
  std::string given;           // as named: a path, or "-" for stdout
  std::filesystem::path path;  // file: what is replaced (a link's final target); stream: what is opened
  int fd = -1;                 // stream: the descriptor to write (stdout, stderr), else -1: `path` is opened
  std::string what;            // stream: "standard output", "a FIFO", "a character device", "a socket"

  bool is_stream() const { return kind == Kind::stream; }
  bool is_stdout() const { return is_stream() && fd == 1; }
  // The folder a side file of this output goes to (file outputs only).
  std::filesystem::path dir() const;
};

// Decides how `given` is written and checks, before any work, that it can
// be: its folder exists and is writable, it is not a directory, its links
// resolve (Error(usage) naming the path otherwise).
OutputTarget plan_output(const std::string& given);

// Bytes to an output. A file output exists under its name only after
// commit(); destroyed before (an error), nothing of it is left. A stream
// is opened on construction (a FIFO waits for its reader there) and
// written as bytes come; commit() only checks it is all out. Writing is a
// progress phase ("writing NAME", of `expected` bytes when known), and -v
// logs each output committed with its size and time.
class OutputFile {
 public:
  explicit OutputFile(OutputTarget target, uint64_t expected = 0);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends; throws Error(input) on a write error (disk full, a closed pipe).
  void write(const void* data, size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  uint64_t size() const { return size_; }
  // The open descriptor, for writers that stream (protobuf's
  // FileOutputStream); call count_written() with what they wrote.
  int fd() const { return fd_; }
  void count_written(uint64_t n) {
    size_ += n;
    phase_->advance(n);
  }
  // File: synced, given its mode, and named as the target in one rename.
  void commit();
  // Several files named together: none of them is named unless every one
  // can be (a model and its external data file).
  static void commit_all(const std::vector<OutputFile*>& files);
  // Removes the committed file again (a related write failed). Files only.
  void undo_commit();
  const OutputTarget& target() const { return target_; }

 private:
  void link_temp_name();  // with the registry locked
  OutputTarget target_;
  Stopwatch took_;
  std::unique_ptr<progress::Phase> phase_;
  int fd_ = -1;
  bool owns_fd_ = false;
  bool named_temp_ = false;  // the temporary file has a (registered) name
  std::filesystem::path temp_;
  uint64_t size_ = 0;
  bool committed_ = false;
  // The replaced file's mode and owner, kept.
  bool keep_stat_ = false;
  unsigned mode_ = 0, uid_ = 0, gid_ = 0;
};

// Writes `text` to `target` whole (reports).
void write_output(const OutputTarget& target, const std::string& text);

// An unnamed read-write scratch file in $TMPDIR (else /tmp), gone when
// closed: O_TMPFILE, else a name removed at once (registered meanwhile).
// Returns the descriptor; Error(input) naming the folder when it cannot.
// `purpose` says what it is for, in that error.
int scratch_file(const std::string& purpose);
// The folder scratch_file uses.
std::string scratch_dir();

// Removes every named temporary file of an unfinished output, and blocks
// any further one from being made or named: for the CLI's signal handling,
// right before the process dies. Thread-safe.
void remove_unfinished_outputs() noexcept;

}  // namespace bnorm

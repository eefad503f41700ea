// Helpers shared by the tests: temporary directories, running the CLI,
// locating the project's generated test data.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bnorm::test {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Restrictions on the child process of run_cli.
struct CliLimits {
  // RLIMIT_FSIZE in bytes (0: none): writes past it fail, as on a full disk
  // (bnorm ignores SIGXFSZ, so it sees the error, EFBIG, instead of dying).
  unsigned long long file_size = 0;
  // Run as user and group 65534 (nobody) when the tests run as root, so
  // that directory permissions apply.
  bool unprivileged = false;
  // Bytes given on stdin through a pipe (stdin is /dev/null otherwise).
  std::optional<std::string> stdin_data;
  // "NAME=VALUE" set in the child's environment, "NAME" removed from it.
  std::vector<std::string> env;
  // The child's working directory (empty: the test's).
  std::string cwd;
};

// Runs build/bnorm with `args` (no shell; arguments passed as they are).
CliResult run_cli(const std::vector<std::string>& args, const CliLimits& limits = {});

// Starts build/bnorm with `args` in the background, stdout and stderr to
// files in `io`; returns its pid. wait_cli() reaps it: the exit code, or
// 128 + the signal that ended it.
int start_cli(const std::vector<std::string>& args, const std::filesystem::path& io, const CliLimits& limits = {});
int wait_cli(int pid);

// Runs build/bnorm on a pseudo-terminal (stdout and stderr both on it, as
// in an interactive shell) and returns everything it printed there.
CliResult run_cli_tty(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// testdata/<name> in the source tree.
std::filesystem::path testdata(const std::string& name);

std::string read_file(const std::filesystem::path& p);
// How many entries the directory holds (no recursion).
size_t entries(const std::filesystem::path& dir);
void write_file(const std::filesystem::path& p, const std::string& bytes);

}  // namespace bnorm::test

#include "support/cli.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace bnorm::test {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path_ = fs::temp_directory_path() /
          ("bnorm-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rd()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

namespace {

// In the child, before exec: environment, limits, identity, directory.
void prepare_child(const CliLimits& limits) {
  for (const auto& e : limits.env) {
    const auto eq = e.find('=');
    if (eq == std::string::npos) ::unsetenv(e.c_str());
    else ::setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
  }
  if (!limits.cwd.empty() && ::chdir(limits.cwd.c_str()) != 0) ::_exit(126);
  if (limits.unprivileged && ::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(126);
  if (limits.file_size > 0) {
    const rlimit lim{static_cast<rlim_t>(limits.file_size), static_cast<rlim_t>(limits.file_size)};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(126);
  }
}

[[noreturn]] void exec_cli(const std::vector<std::string>& args) {
  std::vector<std::string> all{BNORM_CLI};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(BNORM_CLI, argv.data());
  ::_exit(127);
}

}  // namespace

int start_cli(const std::vector<std::string>& args, const fs::path& io, const CliLimits& limits) {
  const std::string out_path = (io / "out").string(), err_path = (io / "err").string();
  int in_pipe[2] = {-1, -1};
  if (limits.stdin_data && ::pipe(in_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int i = limits.stdin_data ? in_pipe[0] : ::open("/dev/null", O_RDONLY);
    ::dup2(i, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    if (limits.stdin_data) ::close(in_pipe[1]);
    prepare_child(limits);
    exec_cli(args);
  }
  if (limits.stdin_data) {
    ::close(in_pipe[0]);
    // Written from a thread: the child may stop reading early (an error);
    // EPIPE then just ends the writing (SIGPIPE is ignored in the tests).
    std::thread([fd = in_pipe[1], data = *limits.stdin_data]() {
      size_t done = 0;
      while (done < data.size()) {
        const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
        if (w <= 0) break;
        done += static_cast<size_t>(w);
      }
      ::close(fd);
    }).detach();
  }
  return pid;
}

int wait_cli(int pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A crash (signal) is reported as 128 + signal, which no test accepts
  // unless it sent that signal itself.
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

CliResult run_cli(const std::vector<std::string>& args, const CliLimits& limits) {
  TempDir io;
  const int pid = start_cli(args, io.path(), limits);
  CliResult r;
  r.exit_code = wait_cli(pid);
  r.out = read_file(io / "out");
  r.err = read_file(io / "err");
  return r;
}

CliResult run_cli_tty(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  int master = -1;
  winsize ws{};
  ws.ws_row = 24;
  ws.ws_col = 200;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) throw std::runtime_error("forkpty failed");
  if (pid == 0) {
    CliLimits limits;
    limits.env = env;
    limits.env.push_back("TERM=xterm");
    prepare_child(limits);
    exec_cli(args);
  }
  CliResult r;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EIO once the child has closed its side
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(master);
  r.exit_code = wait_cli(pid);
  return r;
}

fs::path testdata(const std::string& name) { return fs::path(BNORM_SOURCE_DIR) / "testdata" / name; }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

}  // namespace bnorm::test

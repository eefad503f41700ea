// Where fold and upgrade write: missing or unwritable directories, an output
// that is the input (or one of its external data files), unsafe side-file
// names, and a disk that fills up. Each is exit 2 with one message naming
// the file, nothing left in the output directory, the input unchanged.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>

#include "support/cli.h"

using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kWriters{"fold", "upgrade"};

// Copies testdata/external (model.onnx + weights.bin) into `dir`.
fs::path copy_external(const fs::path& dir) {
  fs::create_directories(dir);
  fs::copy_file(testdata("external/model.onnx"), dir / "model.onnx");
  fs::copy_file(testdata("external/weights.bin"), dir / "weights.bin");
  return dir / "model.onnx";
}

struct Snapshot {
  explicit Snapshot(const fs::path& d) : dir(d) {
    for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename().string()] = read_file(e.path());
  }
  bool unchanged() const { return Snapshot(dir).files == files; }
  fs::path dir;
  std::map<std::string, std::string> files;
};

// `reported`: the command's report is printed though the model could not be
// saved (a disk that fills up); else the output was refused before any work.
void check_write_refused(const std::vector<std::string>& args, const std::string& file, const std::string& expect,
                         const CliLimits& limits = {}, bool reported = false) {
  const auto r = run_cli(args, limits);
  INFO(args[0] << " " << args[1] << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  if (reported) {
    CHECK_FALSE(r.out.empty());
    CHECK(r.out.find("wrote") == std::string::npos);
  } else {
    CHECK(r.out.empty());
  }
  CHECK(r.err.rfind("bnorm: error: " + file + ": ", 0) == 0);
  CHECK(r.err.find(expect) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') <= 2);
}

}  // namespace

TEST_CASE("an output in a missing directory is refused and nothing is created", "[cli][errors][output]") {
  TempDir tmp;
  for (const auto& cmd : kWriters) {
    const auto out = tmp / "nope" / "out.onnx";
    check_write_refused({cmd, testdata("demo_opset6.onnx").string(), "-o", out.string()}, out.string(),
                        "cannot write: directory '" + (tmp / "nope").string() +
                            "' does not exist");
    CHECK_FALSE(fs::exists(tmp / "nope"));
  }
}

TEST_CASE("an output in an unwritable directory is refused and nothing is left", "[cli][errors][output]") {
  TempDir tmp;
  fs::create_directories(tmp / "ro");
  fs::permissions(tmp / "ro", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                  fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // Run as nobody when the tests run as root, so that the permissions apply.
  CliLimits limits;
  limits.unprivileged = true;
  for (const auto& cmd : kWriters) {
    const auto out = tmp / "ro" / "out.onnx";
    check_write_refused({cmd, testdata("demo_opset6.onnx").string(), "-o", out.string()}, out.string(),
                        "cannot write: Permission denied", limits);
    CHECK(entries(tmp / "ro") == 0);
  }
}

TEST_CASE("an -o naming the input is refused, however it is spelled, the input is untouched", "[cli][errors][output]") {
  TempDir tmp;
  fs::copy_file(testdata("demo_opset6.onnx"), tmp / "in.onnx");
  fs::create_symlink(tmp / "in.onnx", tmp / "link.onnx");
  fs::create_hard_link(tmp / "in.onnx", tmp / "hard.onnx");
  const Snapshot before(tmp.path());
  for (const auto& cmd : kWriters) {
    for (const auto& out : {tmp / "in.onnx", tmp / "." / "in.onnx", tmp / "link.onnx", tmp / "hard.onnx"}) {
      check_write_refused({cmd, (tmp / "in.onnx").string(), "-o", out.string()}, out.string(),
                          "the output is the input model itself");
    }
    // The symlink as the input, the real file as the output.
    check_write_refused({cmd, (tmp / "link.onnx").string(), "-o", (tmp / "in.onnx").string()},
                        (tmp / "in.onnx").string(), "the output is the input model itself");
  }
  CHECK(before.unchanged());
  CHECK(fs::is_symlink(tmp / "link.onnx"));
}

TEST_CASE("outputs that would overwrite the input's external data are refused", "[cli][errors][output][external]") {
  TempDir tmp;
  const auto model = copy_external(tmp / "m");
  const Snapshot before(tmp / "m");
  const std::string weights = (tmp / "m" / "weights.bin").string();
  for (const auto& cmd : kWriters) {
    // -o is the side file the input reads.
    check_write_refused({cmd, model.string(), "-o", weights}, weights,
                        "the output is the external data file '" + weights + "' of the input");
    // The side file written next to the output would replace the input's.
    const auto out = tmp / "m" / "other.onnx";
    check_write_refused({cmd, model.string(), "-o", out.string(), "--external-data", "weights.bin"}, out.string(),
                        "the external data file '" + weights + "' is one the input reads its external data from");
    // The side file would be the output itself.
    const auto out2 = tmp / "x.onnx";
    check_write_refused({cmd, model.string(), "-o", out2.string(), "--external-data", "x.onnx"}, out2.string(),
                        "would be the output model itself");
    CHECK(entries(tmp.path()) == 1);
  }
  CHECK(before.unchanged());
}

TEST_CASE("a side-file name outside the output's directory is refused on writing", "[cli][errors][output][external]") {
  TempDir tmp;
  const auto model = copy_external(tmp / "m");
  fs::create_directories(tmp / "out");
  fs::create_directories(tmp / "elsewhere");
  fs::create_symlink(tmp / "elsewhere" / "w.bin", tmp / "out" / "link.bin");
  const Snapshot before(tmp / "m");
  struct Case {
    std::string name, expect;
  };
  const Case cases[] = {
      {(tmp / "abs.bin").string(), "is an absolute path"},
      {"../escape.bin", "leaves the model's directory"},
      {"sub/../../escape.bin", "leaves the model's directory"},
      {"link.bin", "resolves outside the model's directory"},
  };
  for (const auto& cmd : kWriters) {
    for (const auto& c : cases) {
      const auto out = tmp / "out" / "o.onnx";
      check_write_refused({cmd, model.string(), "-o", out.string(), "--external-data", c.name}, out.string(),
                          "external data location '" + c.name + "' " + c.expect);
      CHECK(entries(tmp / "out") == 1);  // the symlink only
      CHECK(entries(tmp / "elsewhere") == 0);
      CHECK_FALSE(fs::exists(tmp / "abs.bin"));
      CHECK_FALSE(fs::exists(tmp / "escape.bin"));
    }
  }
  CHECK(before.unchanged());
}

TEST_CASE("a disk that fills up while writing: exit 2, a clear message, no partial output", "[cli][errors][output]") {
  TempDir tmp;
  CliLimits limits;
  limits.file_size = 4096;  // the model is 86 kB
  for (const auto& cmd : kWriters) {
    const auto out = tmp / "out.onnx";
    check_write_refused({cmd, testdata("demo_opset6.onnx").string(), "-o", out.string()}, out.string(),
                        "cannot write: File too large", limits, true);
    CHECK(entries(tmp.path()) == 0);
  }
  // External data: the side file (512 bytes of weights) or the model fails.
  const auto model = copy_external(tmp / "m");
  const Snapshot before(tmp / "m");
  fs::create_directories(tmp / "out");
  for (const unsigned long long limit : {300ull, 700ull}) {
    INFO("limit " << limit);
    limits.file_size = limit;
    const auto out = tmp / "out" / "o.onnx";
    const auto r = run_cli({"upgrade", model.string(), "-o", out.string()}, limits);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK(entries(tmp / "out") == 0);
  }
  CHECK(before.unchanged());
  // Without the limit the same command succeeds, so the limit was what failed.
  const auto ok = run_cli({"upgrade", model.string(), "-o", (tmp / "out" / "o.onnx").string()});
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(tmp / "out" / "o.onnx.data"));
}

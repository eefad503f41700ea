// bnorm inside pipelines: what each kind of output path gets (FIFOs,
// character devices, symlinks, stdout), models read from streams, and
// interrupts at any moment of a large write leaving nothing behind. Every
// special file is one the test makes, never the system's own.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "support/conv_bn_model.h"
#include "model/model.h"
#include "support/cli.h"

using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// A model bnorm can read back, from bytes.
bool is_model(const std::string& bytes) {
  onnx::ModelProto m;
  return !bytes.empty() && m.ParseFromString(bytes) && m.has_graph();
}

std::string demo() { return testdata("demo_opset6.onnx").string(); }

// Reads a FIFO to its end on a thread of its own.
class FifoReader {
 public:
  explicit FifoReader(const fs::path& fifo) : thread_([this, fifo] {
    std::ifstream in(fifo, std::ios::binary);
    data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }) {}
  std::string take() {
    thread_.join();
    return data_;
  }

 private:
  std::string data_;
  std::thread thread_;
};

// N blocks of Conv(C -> C, 3x3, pads 1) + BatchNormalization at opset 13:
// 36 * C * C bytes of weights a block.
onnx::ModelProto conv_bn_chain(int blocks, int channels) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  declare(g->add_input(), "x", {1, channels, 4, 4});
  std::string prev = "x";
  std::vector<float> w(static_cast<size_t>(channels) * channels * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7919) % 1000) * 1e-4f - 0.05f;
  const std::vector<float> ones(channels, 1.0f), zeros(channels, 0.0f);
  for (int b = 0; b < blocks; ++b) {
    const std::string k = std::to_string(b);
    *g->add_initializer() = floats("w" + k, {channels, channels, 3, 3}, w);
    for (const char* p : {"s", "B", "m", "v"}) {
      *g->add_initializer() = floats(p + k, {channels}, std::string(p) == "s" || std::string(p) == "v" ? ones : zeros);
    }
    auto* conv = g->add_node();
    conv->set_name("conv" + k);
    conv->set_op_type("Conv");
    conv->add_input(prev);
    conv->add_input("w" + k);
    conv->add_output("c" + k);
    auto* pads = conv->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    auto* bn = g->add_node();
    bn->set_name("bn" + k);
    bn->set_op_type("BatchNormalization");
    for (const std::string& in : {"c" + k, "s" + k, "B" + k, "m" + k, "v" + k}) bn->add_input(in);
    bn->add_output("y" + k);
    prev = "y" + k;
  }
  declare(g->add_output(), prev, {1, channels, 4, 4});
  return m;
}

void save_proto(const onnx::ModelProto& m, const fs::path& p) {
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
}

}  // namespace

TEST_CASE("fold and upgrade -o to a FIFO writes the model into it, the FIFO stays a FIFO", "[cli][output][pipeline]") {
  TempDir tmp;
  const fs::path fifo = tmp / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string cmd : {"fold", "upgrade"}) {
    FifoReader reader(fifo);
    const auto r = run_cli({cmd, demo(), "-o", fifo.string()});
    const std::string got = reader.take();
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(is_model(got));
    CHECK_THAT(r.out, Catch::Contains("wrote " + fifo.string() + " (a FIFO)"));
    CHECK(fs::is_fifo(fifo));
    CHECK(listing(tmp.path()) == std::set<std::string>{"pipe"});
  }
}

TEST_CASE("fold and upgrade -o to a character device writes through it and never replaces it", "[cli][output][pipeline]") {
  TempDir tmp;
  const fs::path dev = tmp / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    WARN("cannot make a device node here (not root?): skipped");
    return;
  }
  for (const std::string cmd : {"fold", "upgrade"}) {
    const auto r = run_cli({cmd, demo(), "-o", dev.string(), "--verify"});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("(a character device)"));
    CHECK(fs::is_character_file(dev));
  }
  // eval's reports too.
  const auto e = run_cli({"eval", demo(), "--compare", demo(), "--random", "1", "--junit", dev.string(), "--report",
                          dev.string()});
  CHECK(e.exit_code == 0);
  CHECK(fs::is_character_file(dev));
  CHECK(listing(tmp.path()) == std::set<std::string>{"null"});
}

TEST_CASE("fold -o through a symlink writes the link's target, the link stays", "[cli][output][pipeline]") {
  TempDir tmp;
  fs::create_directories(tmp / "real");
  // A link to an existing file, a chain of two links, and a dangling link.
  bnorm::test::write_file(tmp / "real" / "old.onnx", "old");
  fs::create_symlink("real/old.onnx", tmp / "link.onnx");
  fs::create_symlink("link.onnx", tmp / "chain.onnx");
  fs::create_symlink("real/new.onnx", tmp / "dangling.onnx");
  for (const std::string link : {"link.onnx", "chain.onnx", "dangling.onnx"}) {
    const auto r = run_cli({"fold", demo(), "-o", (tmp / link).string()});
    INFO(link << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::is_symlink(tmp / link));
  }
  CHECK(is_model(read_file(tmp / "real" / "old.onnx")));
  CHECK(is_model(read_file(tmp / "real" / "new.onnx")));
  CHECK(listing(tmp / "real") == std::set<std::string>{"old.onnx", "new.onnx"});
  CHECK(listing(tmp.path()) == std::set<std::string>{"real", "link.onnx", "chain.onnx", "dangling.onnx"});
}

TEST_CASE("a symlinked output's external data goes beside the link's target", "[cli][output][pipeline]") {
  TempDir tmp;
  fs::create_directories(tmp / "m");
  fs::copy_file(testdata("external/model.onnx"), tmp / "m" / "model.onnx");
  fs::copy_file(testdata("external/weights.bin"), tmp / "m" / "weights.bin");
  fs::create_directories(tmp / "real");
  fs::create_symlink(tmp / "real" / "out.onnx", tmp / "out.onnx");
  const auto r = run_cli({"upgrade", (tmp / "m" / "model.onnx").string(), "-o", (tmp / "out.onnx").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::is_symlink(tmp / "out.onnx"));
  CHECK(listing(tmp / "real") == std::set<std::string>{"out.onnx", "out.onnx.data"});
  // The model reads back through the link, its external data beside the target.
  const auto back = run_cli({"eval", (tmp / "real" / "out.onnx").string(), "--random", "0"});
  CHECK(back.exit_code == 0);
}

TEST_CASE("a replaced output keeps its mode, a new one gets the umask's", "[cli][output][pipeline]") {
  TempDir tmp;
  bnorm::test::write_file(tmp / "kept.onnx", "old");
  fs::permissions(tmp / "kept.onnx", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  REQUIRE(run_cli({"fold", demo(), "-o", (tmp / "kept.onnx").string()}).exit_code == 0);
  CHECK(fs::status(tmp / "kept.onnx").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  REQUIRE(run_cli({"fold", demo(), "-o", (tmp / "new.onnx").string()}).exit_code == 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK(static_cast<mode_t>(fs::status(tmp / "new.onnx").permissions()) == (0666 & ~mask));
}

TEST_CASE("fold and upgrade -o - write the model to stdout and the report to stderr", "[cli][output][pipeline]") {
  for (const std::string cmd : {"fold", "upgrade"}) {
    const auto r = run_cli({cmd, demo(), "-o", "-"});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(is_model(r.out));
    CHECK_THAT(r.err, Catch::Contains("wrote - (standard output)"));
  }
  // -q: stderr holds errors only, so the report is not printed at all.
  const auto q = run_cli({"fold", demo(), "-o", "-", "-q"});
  CHECK(is_model(q.out));
  CHECK(q.err.empty());
  // With --json the report goes to stderr too, -q or not.
  const auto j = run_cli({"fold", demo(), "-o", "-", "--json", "-q"});
  CHECK(is_model(j.out));
  CHECK(nlohmann::json::parse(j.err)["written"] == true);
}

TEST_CASE("an -o naming the file that is stdout writes through stdout, never replacing it", "[cli][output][pipeline]") {
  TempDir tmp, io;
  const int pid = start_cli({"fold", demo(), "-o", "/dev/stdout"}, io.path());
  REQUIRE(wait_cli(pid) == 0);
  CHECK(is_model(read_file(io / "out")));
  CHECK(read_file(io / "err").find("(standard output)") != std::string::npos);
}

TEST_CASE("a model read from stdin, -, a FIFO: every command", "[cli][input][pipeline]") {
  const std::string bytes = read_file(demo());
  CliLimits in;
  in.stdin_data = bytes;
  const auto inspect = run_cli({"inspect", "--summary", "-"}, in);
  CHECK(inspect.exit_code == 0);
  CHECK_THAT(inspect.out, Catch::Contains("3 normalization nodes, 3 foldable"));
  const auto fold = run_cli({"fold", "-", "-o", "-", "--verify"}, in);
  CHECK(fold.exit_code == 0);
  CHECK(is_model(fold.out));
  // fold | inspect -
  CliLimits folded;
  folded.stdin_data = fold.out;
  const auto after = run_cli({"inspect", "--summary", "-"}, folded);
  CHECK_THAT(after.out, Catch::Contains("0 normalization nodes"));
  const auto eval = run_cli({"eval", "-", "--random", "0"}, in);
  CHECK(eval.exit_code == 0);
  CHECK_THAT(eval.out, Catch::Contains("logits: float [1, 10]"));
  const auto up = run_cli({"upgrade", "-", "-o", "-", "--to", "13"}, in);
  CHECK(up.exit_code == 0);
  CHECK(is_model(up.out));
  // A FIFO given by path (as a process substitution gives /dev/fd/N).
  TempDir tmp;
  const fs::path fifo = tmp / "in";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << bytes;
  });
  const auto from_fifo = run_cli({"inspect", "--summary", fifo.string()});
  writer.join();
  CHECK(from_fifo.exit_code == 0);
  CHECK_THAT(from_fifo.out, Catch::Contains("3 normalization nodes"));
  // Large models (deferred tensors read back from the spooled copy).
  onnx::ModelProto chain = conv_bn_chain(4, 96);
  CliLimits big;
  big.stdin_data = chain.SerializeAsString();
  const auto big_fold = run_cli({"fold", "-", "-o", "-", "--verify"}, big);
  CHECK(big_fold.exit_code == 0);
  CHECK(is_model(big_fold.out));
}

TEST_CASE("an empty or invalid stdin is refused naming <stdin>", "[cli][input][pipeline]") {
  CliLimits empty;
  empty.stdin_data = "";
  const auto r = run_cli({"inspect", "-"}, empty);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "bnorm: error: <stdin>: is empty\n");
  CliLimits junk;
  junk.stdin_data = "not a model";
  CHECK(run_cli({"inspect", "-"}, junk).exit_code == 2);
}

TEST_CASE("a model from stdin finds its external data in the current folder", "[cli][input][pipeline]") {
  CliLimits in;
  in.stdin_data = read_file(testdata("external/model.onnx"));
  in.cwd = testdata("external").string();
  const auto r = run_cli({"eval", "-", "--random", "0"}, in);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // Elsewhere its data are missing.
  in.cwd = testdata("").string();
  CHECK(run_cli({"eval", "-", "--random", "0"}, in).exit_code == 2);
}

TEST_CASE("a model with external data written to a stream is self-contained", "[cli][output][pipeline]") {
  const auto r = run_cli({"upgrade", testdata("external/model.onnx").string(), "-o", "-"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(r.out));
  for (const auto& t : m.graph().initializer()) CHECK(t.external_data_size() == 0);
  // Runs from stdin anywhere, with nothing beside it.
  CliLimits in;
  in.stdin_data = r.out;
  in.cwd = "/";
  CHECK(run_cli({"eval", "-", "--random", "0"}, in).exit_code == 0);
  const auto refused = run_cli({"upgrade", testdata("external/model.onnx").string(), "-o", "-", "--external-data",
                                "x.bin"});
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("has no side file"));
  CHECK(refused.out.empty());
}

TEST_CASE("eval --input NAME=- reads a tensor from stdin (.npy or .pb by its data)", "[cli][input][pipeline]") {
  TempDir tmp;
  // y = Identity(x); eval writes y as .npy and .pb, which then go back in as x.
  onnx::ModelProto id;
  id.set_ir_version(7);
  id.add_opset_import()->set_version(13);
  auto* g = id.mutable_graph();
  declare(g->add_input(), "x", {2, 3});
  declare(g->add_output(), "y", {2, 3});
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("x");
  n->add_output("y");
  save_proto(id, tmp / "id.onnx");
  REQUIRE(run_cli({"eval", (tmp / "id.onnx").string(), "--random", "9", "--output-dir", (tmp / "y").string()})
              .exit_code == 0);
  for (const std::string ext : {".npy", ".pb"}) {
    CliLimits in;
    in.stdin_data = read_file(tmp / "y" / ("y" + ext));
    const auto r = run_cli({"eval", (tmp / "id.onnx").string(), "--input", "x=-", "--output-dir", (tmp / "z").string()},
                           in);
    INFO(ext << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(read_file(tmp / "z" / "y.npy") == read_file(tmp / "y" / "y.npy"));
  }
}

TEST_CASE("every output location is checked before any work", "[cli][output][pipeline]") {
  TempDir tmp;
  // The model does not exist either: the output is what is reported, first.
  const std::string missing_model = (tmp / "none.onnx").string();
  for (const std::string cmd : {"fold", "upgrade"}) {
    const auto r = run_cli({cmd, missing_model, "-o", (tmp / "nodir" / "x.onnx").string(), "--verify"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("bnorm: error: " + (tmp / "nodir" / "x.onnx").string() +
                                        ": cannot write: directory"));
    const auto dir = run_cli({cmd, missing_model, "-o", tmp.path().string()});
    CHECK(dir.exit_code == 2);
    CHECK_THAT(dir.err, Catch::Contains("cannot write: it is a directory"));
  }
  for (const std::string opt : {"--junit", "--report"}) {
    const auto r = run_cli({"eval", missing_model, "--compare", missing_model, opt, (tmp / "nodir" / "r").string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("nodir/r: cannot write: directory"));
  }
  CHECK(listing(tmp.path()).empty());
}

TEST_CASE("eval --report - writes the page to stdout and the results to stderr", "[cli][output][pipeline]") {
  const auto r = run_cli({"eval", demo(), "--compare", demo(), "--random", "0", "--report", "-"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(r.err, Catch::Contains("the models agree"));
  const auto both = run_cli({"eval", demo(), "--compare", demo(), "--junit", "-", "--report", "-"});
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("cannot both go to standard output"));
}

namespace {

// Runs `args` once to learn how long it takes, then again, killed by `sig`
// at `points` moments spread over that time; after each, `dir` must hold
// what it held before, or that and the complete output when the signal came
// after the output was complete (bnorm finished, or died of the signal with
// its work done).
void kill_at_many_points(const std::vector<std::string>& args, const fs::path& dir, const fs::path& output, int sig,
                         int points, const CliLimits& limits = {}) {
  const std::set<std::string> before = listing(dir);
  TempDir io;
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(wait_cli(start_cli(args, io.path(), limits)) == 0);
  const auto full = std::chrono::steady_clock::now() - t0;
  const std::string whole = read_file(output);
  fs::remove(output);
  int killed = 0;
  for (int k = 0; k < points; ++k) {
    const auto at = full * (k + 0.5) / points;
    const int pid = start_cli(args, io.path(), limits);
    std::this_thread::sleep_for(at);
    ::kill(pid, sig);
    const int code = wait_cli(pid);
    const double ms = std::chrono::duration<double, std::milli>(at).count();
    INFO("killed after " << ms << " ms: exit " << code << "\n" << read_file(io / "err"));
    CHECK((code == 128 + sig || code == 0));
    killed += code == 128 + sig && !fs::exists(output);
    std::set<std::string> now = listing(dir);
    if (fs::exists(output)) {
      CHECK(read_file(output) == whole);
      now.erase(output.filename().string());
    } else {
      CHECK(code == 128 + sig);
    }
    CHECK(now == before);
    fs::remove(output);
  }
  // At least one signal came while the work was under way.
  CHECK(killed > 0);
}

}  // namespace

TEST_CASE("an interrupt at any moment of a large write leaves nothing behind", "[cli][interrupt][pipeline]") {
  TempDir tmp;
  fs::create_directories(tmp / "work");
  // 24 blocks of 448 channels: about 43 MB of weights.
  save_proto(conv_bn_chain(24, 448), tmp / "work" / "big.onnx");
  const std::string in = (tmp / "work" / "big.onnx").string(), out = (tmp / "work" / "out.onnx").string();
  SECTION("SIGTERM") { kill_at_many_points({"fold", in, "-o", out}, tmp / "work", out, SIGTERM, 16); }
  SECTION("SIGINT") { kill_at_many_points({"upgrade", in, "-o", out, "--to", "14"}, tmp / "work", out, SIGINT, 6); }
  SECTION("SIGHUP") { kill_at_many_points({"fold", in, "-o", out}, tmp / "work", out, SIGHUP, 6); }
  SECTION("a filesystem without unnamed files (a hidden name, removed by the interrupt)") {
    CliLimits named;
    named.env = {"BNORM_TEST_NAMED_TEMP=1"};
    kill_at_many_points({"fold", in, "-o", out}, tmp / "work", out, SIGTERM, 12, named);
  }
}

TEST_CASE("a read-only input is read and never modified", "[cli][input][pipeline]") {
  TempDir tmp;
  fs::copy_file(demo(), tmp / "ro.onnx");
  fs::permissions(tmp / "ro.onnx", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const std::string before = read_file(tmp / "ro.onnx");
  const auto st0 = fs::last_write_time(tmp / "ro.onnx");
  CHECK(run_cli({"fold", (tmp / "ro.onnx").string(), "-o", (tmp / "out.onnx").string()}).exit_code == 0);
  CHECK(read_file(tmp / "ro.onnx") == before);
  CHECK(fs::last_write_time(tmp / "ro.onnx") == st0);
}

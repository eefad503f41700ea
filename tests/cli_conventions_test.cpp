// The conventions people expect of a command-line tool: help and version,
// -q/-v anywhere, what -v and -vv tell, a progress line on terminals only,
// colour that NO_COLOR and --color govern, did-you-mean, options that would
// do nothing refused, CLI11's messages in bnorm's words, the inputs and
// outputs inspect lists, the bash completion script and the man page.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "support/cli.h"

using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

std::string demo() { return testdata("demo_opset6.onnx").string(); }

bool has_escape(const std::string& s) { return s.find("\033[") != std::string::npos; }

// A model that evaluates for a while: y = x @ W, 24 times, [768, 768] floats.
fs::path slow_model(const fs::path& dir) {
  const fs::path p = dir / "slow.onnx";
  const std::string script = R"(
import sys, numpy as np
from onnx import helper, TensorProto, numpy_helper, save
n, k = 24, 768
w = numpy_helper.from_array((np.eye(k) * 0.999).astype(np.float32), "W")
nodes, prev = [], "x"
for i in range(n):
    nodes.append(helper.make_node("MatMul", [prev, "W"], [f"y{i}"]))
    prev = f"y{i}"
g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [k, k])],
                      [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [k, k])], [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
)";
  std::ofstream(dir / "make.py") << script;
  const std::string cmd = "/usr/bin/python3 " + (dir / "make.py").string() + " " + p.string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  return p;
}

}  // namespace

TEST_CASE("bnorm help, help COMMAND, help --all and --help agree", "[cli][conventions]") {
  const auto top = run_cli({"help"});
  CHECK(top.exit_code == 0);
  for (const char* cmd : {"inspect", "fold", "eval", "upgrade", "help", "version"}) CHECK_THAT(top.out, Catch::Contains(cmd));
  CHECK(top.out == run_cli({"--help"}).out);
  const auto fold = run_cli({"help", "fold"});
  CHECK(fold.exit_code == 0);
  CHECK(fold.out == run_cli({"fold", "--help"}).out);
  CHECK_THAT(fold.out, Catch::Contains("--verify"));
  const auto all = run_cli({"help", "--all"});
  for (const char* opt : {"--verify", "--fuse-norms", "--compare", "--fp16"}) CHECK_THAT(all.out, Catch::Contains(opt));
  const auto bad = run_cli({"help", "fodl"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "bnorm: error: unknown command 'fodl'\n  hint: did you mean 'bnorm help fold'?\n");
}

TEST_CASE("bnorm version and --version name what bnorm was built with", "[cli][conventions]") {
  const auto v = run_cli({"version"});
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::StartsWith("bnorm 0.1.0\n"));
  CHECK_THAT(v.out, Catch::Contains("ONNX 1.12.0") && Catch::Contains("protobuf 3.") &&
                        Catch::Contains("ai.onnx opsets 1 to 28") && Catch::Contains("kernels: "));
  CHECK(run_cli({"--version"}).out == v.out);
  const auto j = nlohmann::json::parse(run_cli({"version", "--json"}).out);
  CHECK(j["schema"] == "bnorm.version/1");
  CHECK(j["max_opset"] == 28);
  CHECK(j["eval_max_opset"] == 28);
  CHECK_THAT(v.out, Catch::Contains("eval up to 28"));
}

TEST_CASE("a misspelt command or option gets a suggestion", "[cli][conventions]") {
  const auto cmd = run_cli({"flod", demo()});
  CHECK(cmd.exit_code == 2);
  CHECK(cmd.err == "bnorm: error: unknown command 'flod'\n  hint: did you mean 'bnorm fold'?\n");
  const auto opt = run_cli({"fold", demo(), "-o", "x.onnx", "--verfy"});
  CHECK(opt.exit_code == 2);
  CHECK(opt.err == "bnorm: error: unknown option '--verfy' for 'bnorm fold'\n  hint: did you mean '--verify'? "
                   "('bnorm fold --help' shows the usage)\n");
  const auto far = run_cli({"inspect", demo(), "--zzzzzz"});
  CHECK(far.err == "bnorm: error: unknown option '--zzzzzz' for 'bnorm inspect'\n  hint: 'bnorm inspect --help' "
                   "shows the usage\n");
}

TEST_CASE("CLI11's messages come in bnorm's words", "[cli][conventions]") {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases{
      {{"upgrade", demo(), "-o", "x.onnx", "--to", "fifteen"}, "bnorm: error: --to: 'fifteen' is not an integer\n"},
      {{"fold", demo(), "-o"}, "bnorm: error: --output needs a value\n  hint: 'bnorm fold --help' shows the usage\n"},
      {{"fold"}, "bnorm: error: 'bnorm fold' needs a model\n  hint: 'bnorm fold --help' shows the usage\n"},
      {{"upgrade", demo(), "-o", "x.onnx", "--to", "3", "--to", "4"},
       "bnorm: error: --to is given 2 times; give it once\n  hint: 'bnorm upgrade --help' shows the usage\n"},
      {{"fold", demo(), "-o", "x.onnx", "--norms", "most"},
       "bnorm: error: --norms: 'most' is not one of bn|all\n  hint: 'bnorm fold --help' shows the usage\n"},
      {{"inspect", demo(), "other.onnx"},
       "bnorm: error: unexpected argument 'other.onnx' for 'bnorm inspect'\n  hint: 'bnorm inspect --help' shows the "
       "usage\n"},
      {{"eval", demo(), "--random", "-1"},
       "bnorm: error: --random: '-1' is not a seed (an integer from 0 to 18446744073709551615)\n"},
      {{"eval", demo(), "--compare", demo(), "--rtol", "x"}, "bnorm: error: --rtol: 'x' is not a tolerance (a number >= 0)\n"},
      {{}, "bnorm: error: no command given\n  hint: the commands are inspect, fold, eval and upgrade ('bnorm help' says "
           "more)\n"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    INFO(fmt::format("{}", fmt::join(c.args, " ")));
    CHECK(r.exit_code == 2);
    CHECK(r.err == c.err);
    CHECK(r.out.empty());
  }
}

TEST_CASE("an option that would have no effect is refused, saying why", "[cli][conventions]") {
  TempDir tmp;
  const std::string out = (tmp / "x.onnx").string();
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases{
      {{"fold", demo(), "-o", out, "--seed", "5"},
       "bnorm: error: --seed has no effect without --verify: it seeds --verify's random inputs\n"},
      {{"upgrade", demo(), "-o", out, "--seed", "5"},
       "bnorm: error: --seed has no effect without --verify: it seeds --verify's random inputs\n"},
      {{"upgrade", demo(), "-o", out, "--dim", "N=3"},
       "bnorm: error: --dim has no effect without --verify: it sizes --verify's random inputs\n"},
      {{"inspect", demo(), "--json", "--summary"},
       "bnorm: error: --summary has no effect with --json: the JSON report is always whole\n"},
      {{"eval", demo(), "--random", "0", "--rtol", "1e-3"},
       "bnorm: error: --rtol has no effect on one model: tolerances apply to --compare and to test folders\n"},
      {{"eval", demo(), "--compare", demo(), "--output-dir", tmp.path().string()},
       "bnorm: error: --output-dir has no effect with --compare: it writes one model's outputs\n"},
      {{"-q", "-v", "inspect", demo()}, "bnorm: error: -q and -v contradict each other: give one\n"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    INFO(fmt::format("{}", fmt::join(c.args, " ")));
    CHECK(r.exit_code == 2);
    CHECK(r.err == c.err);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("the global options -q and -v are taken before or after the command", "[cli][conventions]") {
  TempDir tmp;
  // A training BN kept as training warns: -q silences it wherever it stands.
  const std::string t = testdata("legacy_training_opset1.onnx").string(), out = (tmp / "t.onnx").string();
  CHECK_THAT(run_cli({"upgrade", t, "-o", out}).err, Catch::Contains("bnorm: warning:"));
  for (const auto& args : std::vector<std::vector<std::string>>{{"-q", "upgrade", t, "-o", out},
                                                                 {"upgrade", t, "-o", out, "-q"},
                                                                 {"upgrade", "-q", t, "-o", out}}) {
    const auto r = run_cli(args);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
  for (const auto& args : std::vector<std::vector<std::string>>{{"-v", "inspect", demo()}, {"inspect", demo(), "-v"}}) {
    const auto r = run_cli(args);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("bnorm: debug: read "));
  }
}

TEST_CASE("verbose: -v tells each phase with its time, -vv each node", "[cli][conventions]") {
  TempDir tmp;
  const auto v = run_cli({"fold", demo(), "-o", (tmp / "f.onnx").string(), "--verify", "-v"});
  CHECK(v.exit_code == 0);
  const std::regex read("bnorm: debug: read .*demo_opset6.onnx: IR 3, opset 6, 9 nodes .* \\([0-9.]+ ms\\)");
  CHECK(std::regex_search(v.err, read));
  CHECK(std::regex_search(v.err, std::regex("bnorm: debug: evaluated [0-9]+ nodes .*\\([0-9.]+ ms\\)")));
  CHECK(std::regex_search(v.err, std::regex("bnorm: debug: wrote .*f.onnx: [0-9]+ bytes \\([0-9.]+ ms\\)")));
  CHECK_THAT(v.err, !Catch::Contains("bnorm: trace:"));
  const auto vv = run_cli({"eval", demo(), "--random", "0", "-vv"});
  CHECK(vv.exit_code == 0);
  // conv1 applies bn1 and relu1 as it computes (evaluator.h).
  CHECK(std::regex_search(vv.err, std::regex("bnorm: trace: node 1/9 conv1 \\(fused with bn1, relu1\\): [0-9.]+ ms")));
}

TEST_CASE("a progress line is drawn on a terminal only, never in a pipe or under CI", "[cli][conventions]") {
  TempDir tmp;
  const std::string slow = slow_model(tmp.path()).string();
  // The line appears once the work has run for BNORM_PROGRESS_DELAY_MS (1 s
  // by default) and is erased at the end.
  const auto tty = run_cli_tty({"eval", slow, "--random", "0"}, {"BNORM_PROGRESS_DELAY_MS=0", "CI"});
  CHECK(tty.exit_code == 0);
  INFO(tty.out);
  CHECK(std::regex_search(tty.out, std::regex("\rbnorm: evaluating: [0-9]+/24 nodes \\([0-9]+%\\)\033\\[K")));
  CHECK_THAT(tty.out, Catch::Contains("\r\033[K"));
  const auto ci = run_cli_tty({"eval", slow, "--random", "0"}, {"BNORM_PROGRESS_DELAY_MS=0", "CI=true"});
  CHECK(ci.exit_code == 0);
  CHECK_THAT(ci.out, !Catch::Contains("evaluating"));
  const auto quiet = run_cli_tty({"eval", slow, "--random", "0", "-q"}, {"BNORM_PROGRESS_DELAY_MS=0", "CI"});
  CHECK_THAT(quiet.out, !Catch::Contains("evaluating"));
  CliLimits pipe;
  pipe.env = {"BNORM_PROGRESS_DELAY_MS=0", "CI"};
  const auto piped = run_cli({"eval", slow, "--random", "0"}, pipe);
  CHECK(piped.err.empty());
}

TEST_CASE("errors and warnings are coloured on a terminal, never with NO_COLOR or --color never", "[cli][conventions]") {
  TempDir tmp;
  const std::string t = testdata("legacy_training_opset1.onnx").string(), out = (tmp / "t.onnx").string();
  const auto tty = run_cli_tty({"upgrade", t, "-o", out}, {"NO_COLOR", "CI=1"});
  CHECK_THAT(tty.out, Catch::Contains("bnorm: \033[1;33mwarning\033[0m: "));
  const auto err = run_cli_tty({"inspect", "none.onnx"}, {"NO_COLOR", "CI=1"});
  CHECK_THAT(err.out, Catch::Contains("bnorm: \033[1;31merror\033[0m: none.onnx: no such file"));
  CHECK_FALSE(has_escape(run_cli_tty({"upgrade", t, "-o", out}, {"NO_COLOR=1", "CI=1"}).out));
  CHECK_FALSE(has_escape(run_cli_tty({"--color", "never", "upgrade", t, "-o", out}, {"NO_COLOR", "CI=1"}).out));
  // In a pipe: plain, unless --color always.
  CHECK_FALSE(has_escape(run_cli({"inspect", "none.onnx"}).err));
  CHECK(run_cli({"inspect", "none.onnx", "--color", "always"}).err ==
        "bnorm: \033[1;31merror\033[0m: none.onnx: no such file\n");
}

TEST_CASE("inspect lists the graph's inputs and outputs with the --dim that sizes each symbolic dim",
          "[cli][conventions][inspect]") {
  TempDir tmp;
  const std::string script = R"(
import sys
from onnx import helper, TensorProto, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None, "2d"])
s = helper.make_tensor_value_info("s", TensorProto.INT64, [])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, None, "2d"])
n = helper.make_node("Identity", ["x"], ["y"])
save(helper.make_model(helper.make_graph([n], "g", [x, s], [y]), opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
)";
  std::ofstream(tmp / "make.py") << script;
  REQUIRE(std::system(("/usr/bin/python3 " + (tmp / "make.py").string() + " " + (tmp / "m.onnx").string()).c_str()) == 0);
  const auto r = run_cli({"inspect", (tmp / "m.onnx").string(), "--summary"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("inputs     x float [batch, 3, ?, 2d]  --dim batch=N --dim x[2]=N --dim 2d=N\n"
                                    "           s int64 []\n"
                                    "outputs    y float [batch, 3, ?, 2d]\n"));
  const auto j = nlohmann::json::parse(run_cli({"inspect", (tmp / "m.onnx").string(), "--json"}).out);
  CHECK(j["inputs"][0]["shape"] == nlohmann::json::parse(R"(["batch", 3, null, "2d"])"));
  CHECK(j["inputs"][0]["dim_options"] == nlohmann::json::parse(R"(["--dim batch=N", "--dim x[2]=N", "--dim 2d=N"])"));
  CHECK(j["outputs"][0]["name"] == "y");
  // The spelling works as printed.
  CHECK(run_cli({"eval", (tmp / "m.onnx").string(), "--random", "0", "--dim", "batch=2", "--dim", "x[2]=4", "--dim",
                 "2d=5"})
            .exit_code == 0);
}

TEST_CASE("the bash completion script completes commands and each command's options", "[cli][conventions]") {
  TempDir tmp;
  const auto script = run_cli({"completion", "bash"});
  REQUIRE(script.exit_code == 0);
  write_file(tmp / "bnorm.bash", script.out);
  // Completing "bnorm fo", "bnorm fold --ver" and "bnorm upgrade m.onnx --fu".
  const std::string probe = "source " + (tmp / "bnorm.bash").string() + R"(
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _bnorm; echo "${COMPREPLY[*]}"; }
complete_words bnorm fo
complete_words bnorm fold --ver
complete_words bnorm -q upgrade m.onnx --fu
complete_words bnorm eval m.onnx --color al
)";
  write_file(tmp / "probe.sh", probe);
  REQUIRE(std::system(("bash -n " + (tmp / "bnorm.bash").string()).c_str()) == 0);
  REQUIRE(std::system(("bash " + (tmp / "probe.sh").string() + " > " + (tmp / "got").string()).c_str()) == 0);
  CHECK(read_file(tmp / "got") == "fold\n--verify --verbose --version\n--fuse-norms\nalways\n");
  // Every option of every command is in it.
  for (const char* cmd : {"inspect", "fold", "eval", "upgrade"}) {
    const auto help = run_cli({cmd, "--help"}).out;
    std::smatch m;
    std::string rest = help;
    while (std::regex_search(rest, m, std::regex("(--[a-z][a-z0-9-]+)"))) {
      CHECK_THAT(script.out, Catch::Contains(m[1].str()));
      rest = m.suffix();
    }
  }
}

TEST_CASE("commands that evaluate run OpenMP's threads with passive waits unless the user chose", "[cli][conventions]") {
  // libgomp prints the settings it runs with under OMP_DISPLAY_ENV; the last print is the process that works.
  auto last_policy = [](const std::string& err) {
    const auto at = err.rfind("OMP_WAIT_POLICY = '");
    return at == std::string::npos ? std::string() : err.substr(at + 19, err.find('\'', at + 19) - at - 19);
  };
  auto count = [](const std::string& err) {
    size_t n = 0;
    for (size_t at = err.find("OPENMP DISPLAY ENVIRONMENT BEGIN"); at != std::string::npos;
         at = err.find("OPENMP DISPLAY ENVIRONMENT BEGIN", at + 1))
      ++n;
    return n;
  };
  CliLimits two;
  two.env = {"OMP_DISPLAY_ENV=true", "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"};
  const auto r = run_cli({"eval", demo(), "--random", "0"}, two);
  CHECK(r.exit_code == 0);
  CHECK(last_policy(r.err) == "PASSIVE");
  CHECK(count(r.err) == 2);  // started once more, with the policy set
  CliLimits chosen = two;
  chosen.env.push_back("OMP_WAIT_POLICY=active");
  const auto a = run_cli({"-v", "eval", demo(), "--random", "0"}, chosen);
  CHECK(a.exit_code == 0);
  CHECK(last_policy(a.err) == "ACTIVE");
  CHECK(count(a.err) == 1);
  // A command that evaluates nothing, and one thread, start once.
  CHECK(count(run_cli({"version"}, two).err) == 1);
  CliLimits one = two;
  one.env.push_back("OMP_NUM_THREADS=1");
  CHECK(count(run_cli({"eval", demo(), "--random", "0"}, one).err) == 1);
}

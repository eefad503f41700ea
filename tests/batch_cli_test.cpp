// fold and upgrade on several models: --output-dir, one failing model does
// not stop the others, the worst exit code, names that collide, JSON.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/conv_bn_model.h"
#include "support/cli.h"

using namespace bnorm::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kWriters{"fold", "upgrade"};

// Three inputs in `dir`: a.onnx and c.onnx good, b.onnx not a model.
std::vector<std::string> three_inputs(const TempDir& dir) {
  fs::create_directories(dir / "in");
  fs::copy_file(testdata("demo_opset6.onnx"), dir / "in" / "a.onnx");
  write_file(dir / "in" / "b.onnx", "not a model");
  fs::copy_file(testdata("small_cnn_opset9.onnx"), dir / "in" / "c.onnx");
  return {(dir / "in" / "a.onnx").string(), (dir / "in" / "b.onnx").string(), (dir / "in" / "c.onnx").string()};
}

}  // namespace

TEST_CASE("several models go to DIR/<file name>, each reported", "[cli][batch]") {
  for (const auto& cmd : kWriters) {
    TempDir tmp;
    fs::create_directories(tmp / "out");
    const std::vector<std::string> in{testdata("demo_opset6.onnx").string(), testdata("small_cnn_opset9.onnx").string()};
    const auto r = run_cli({cmd, in[0], in[1], "--output-dir", (tmp / "out").string()});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(tmp / "out" / "demo_opset6.onnx"));
    CHECK(fs::exists(tmp / "out" / "small_cnn_opset9.onnx"));
    CHECK(entries(tmp / "out") == 2);
    for (int i = 0; i < 2; ++i) {
      const std::string out = (tmp / "out" / fs::path(in[i]).filename()).string();
      CHECK(r.out.find(in[i] + " -> " + out + "\n") != std::string::npos);
      CHECK(r.out.find("wrote " + out) != std::string::npos);
    }
    CHECK(r.out.find("2 models: 2 written, 0 not written\n") != std::string::npos);
    // Each output is what the one-model form writes.
    TempDir one;
    REQUIRE(run_cli({cmd, in[0], "-o", (one / "x.onnx").string()}).exit_code == 0);
    CHECK(read_file(one / "x.onnx") == read_file(tmp / "out" / "demo_opset6.onnx"));
  }
}

TEST_CASE("one failing model does not stop the others, the exit code is the worst", "[cli][batch][errors]") {
  for (const auto& cmd : kWriters) {
    TempDir tmp;
    const auto in = three_inputs(tmp);
    fs::create_directories(tmp / "out");
    const auto r = run_cli({cmd, in[0], in[1], in[2], "--output-dir", (tmp / "out").string()});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(fs::exists(tmp / "out" / "a.onnx"));
    CHECK_FALSE(fs::exists(tmp / "out" / "b.onnx"));
    CHECK(fs::exists(tmp / "out" / "c.onnx"));
    CHECK(entries(tmp / "out") == 2);
    CHECK(r.err == "bnorm: error: " + in[1] + ": not an ONNX model: the protobuf data is invalid or truncated\n");
    CHECK(r.out.find(in[1] + " -> " + (tmp / "out" / "b.onnx").string() + "\n  error: " + in[1] +
                     ": not an ONNX model") != std::string::npos);
    CHECK(r.out.find("3 models: 2 written, 1 not written\n") != std::string::npos);
    CHECK(read_file(in[1]) == "not a model");
  }
}

TEST_CASE("with several models, --json prints one object holding the one-model objects and the counts", "[cli][batch]") {
  for (const auto& cmd : kWriters) {
    TempDir tmp;
    const auto in = three_inputs(tmp);
    fs::create_directories(tmp / "out");
    const auto r = run_cli({cmd, in[0], in[1], in[2], "--output-dir", (tmp / "out").string(), "--json"});
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 2);
    const json all = json::parse(r.out);
    CHECK(all["schema"] == "bnorm." + cmd + "-batch/1");
    CHECK(all["written"] == 2);
    CHECK(all["not_written"] == 1);
    CHECK(all["exit_code"] == 2);
    const json& j = all["models"];
    REQUIRE(j.is_array());
    REQUIRE(j.size() == 3);
    const json single = json::parse(run_cli({cmd, in[0], "-o", (tmp / "one.onnx").string(), "--json"}).out);
    for (int i : {0, 2}) {
      CHECK(j[i]["exit_code"] == 0);
      CHECK(j[i]["input"] == in[i]);
      CHECK(j[i]["output"] == (tmp / "out" / fs::path(in[i]).filename()).string());
      CHECK_FALSE(j[i].contains("error"));
      for (const auto& [key, value] : single.items()) CHECK(j[i].contains(key));
      CHECK(j[i]["schema"] == "bnorm." + cmd + "/1");
    }
    CHECK(j[1]["exit_code"] == 2);
    CHECK(j[1]["input"] == in[1]);
    CHECK(j[1]["error"] == in[1] + ": not an ONNX model: the protobuf data is invalid or truncated");
  }
}

TEST_CASE("fold --verify applies per model: a failed verification is exit 1 and writes that model only",
          "[cli][batch][fold]") {
  TempDir tmp;
  auto m = conv_bn();
  // scale 3e38 / sqrt(1e-4 + eps) overflows float: the folded weight is inf,
  // the float64 reference is not.
  initializer(m, "s") = floats("s", {3}, {3e38f, 1.0f, 1.0f});
  initializer(m, "v") = floats("v", {3}, {1e-4f, 1.0f, 1.0f});
  const auto bad = save(tmp, "overflow.onnx", m);
  fs::create_directories(tmp / "out");
  const auto r = run_cli({"fold", "--verify", testdata("demo_opset6.onnx").string(), bad.string(), "--output-dir",
                          (tmp / "out").string(), "--json"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const json j = json::parse(r.out)["models"];
  REQUIRE(j.size() == 2);
  CHECK(j[0]["exit_code"] == 0);
  CHECK(j[0]["written"] == true);
  CHECK(j[0]["verify"].size() == 3);
  CHECK(j[1]["exit_code"] == 1);
  CHECK(j[1]["written"] == false);
  CHECK(j[1]["verify"][0]["pass"] == false);
  CHECK(fs::exists(tmp / "out" / "demo_opset6.onnx"));
  CHECK_FALSE(fs::exists(tmp / "out" / "overflow.onnx"));

  // 2 beats 1: add a model that cannot be read.
  write_file(tmp / "junk.onnx", "junk");
  fs::remove(tmp / "out" / "demo_opset6.onnx");
  const auto worst = run_cli({"fold", "--verify", bad.string(), (tmp / "junk.onnx").string(), "--output-dir",
                              (tmp / "out").string()});
  CHECK(worst.exit_code == 2);
  CHECK(worst.out.find("a fold is off beyond tolerance: nothing written") != std::string::npos);
}

TEST_CASE("batch usage errors are refused before any model is read", "[cli][batch][errors]") {
  TempDir tmp;
  fs::create_directories(tmp / "out");
  fs::create_directories(tmp / "x");
  fs::copy_file(testdata("demo_opset6.onnx"), tmp / "x" / "demo_opset6.onnx");
  const std::string a = testdata("demo_opset6.onnx").string(), b = testdata("small_cnn_opset9.onnx").string();
  const std::string dir = (tmp / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{a, b, "-o", (tmp / "out" / "o.onnx").string()},
       "bnorm: error: -o names one output, but 2 models were given\n  hint: use --output-dir DIR for several models\n"},
      {{a, "-o", (tmp / "out" / "o.onnx").string(), "--output-dir", dir},
       "bnorm: error: give -o or --output-dir, not both\n"},
      {{a, b}, "bnorm: error: give -o OUTPUT (one model) or --output-dir DIR\n"},
      {{a, b, "--output-dir", (tmp / "missing").string()},
       "bnorm: error: --output-dir '" + (tmp / "missing").string() + "' is not an existing directory\n"},
      {{a, (tmp / "x" / "demo_opset6.onnx").string(), "--output-dir", dir},
       "bnorm: error: '" + a + "' and '" + (tmp / "x" / "demo_opset6.onnx").string() + "' would both be written to '" +
           (tmp / "out" / "demo_opset6.onnx").string() +
           "'\n  hint: models written to one --output-dir need different file names\n"},
      {{a, b, "--output-dir", dir, "--external-data", "w.bin"},
       "bnorm: error: --external-data names one side file: give it with one model only\n  hint: without it, each "
       "model's external data goes to DIR/<its file name>.data\n"},
  };
  for (const auto& cmd : kWriters) {
    for (const auto& c : cases) {
      std::vector<std::string> args{cmd};
      args.insert(args.end(), c.args.begin(), c.args.end());
      const auto r = run_cli(args);
      INFO(cmd << " " << c.err);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err == c.err);
      CHECK(entries(tmp / "out") == 0);
      CHECK_FALSE(fs::exists(tmp / "missing"));
    }
  }
}

TEST_CASE("an --output-dir that is the inputs' own directory refuses each model, not the others", "[cli][batch][errors]") {
  TempDir tmp;
  fs::copy_file(testdata("demo_opset6.onnx"), tmp / "a.onnx");
  fs::create_directories(tmp / "out");
  const std::string before = read_file(tmp / "a.onnx");
  const auto r = run_cli({"fold", (tmp / "a.onnx").string(), testdata("small_cnn_opset9.onnx").string(),
                          "--output-dir", tmp.path().string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bnorm: error: " + (tmp / "a.onnx").string() + ": the output is the input model itself") == 0);
  CHECK(read_file(tmp / "a.onnx") == before);
  CHECK(fs::exists(tmp / "small_cnn_opset9.onnx"));
}

TEST_CASE("a bad option value is reported without a file, for each model", "[cli][batch][errors]") {
  TempDir tmp;
  fs::create_directories(tmp / "out");
  const std::string a = testdata("demo_opset6.onnx").string();
  const auto one = run_cli({"upgrade", a, "-o", (tmp / "out" / "o.onnx").string(), "--to", "99"});
  CHECK(one.exit_code == 2);
  CHECK(one.err == "bnorm: error: --to 99: the target opset must be 1 to 28\n");
  const auto two = run_cli({"upgrade", a, testdata("small_cnn_opset9.onnx").string(), "--output-dir",
                            (tmp / "out").string(), "--to", "0"});
  CHECK(two.exit_code == 2);
  CHECK(two.out.find("2 models: 0 written, 2 not written") != std::string::npos);
  CHECK(entries(tmp / "out") == 0);
}

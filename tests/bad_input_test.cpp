// The bad-input matrix: every command that takes a model, on every kind of
// bad input, through the CLI. Each refusal is exit 2, nothing on stdout, one
// short message on stderr naming the file (and the node when there is one),
// no output file left, and the input's bytes unchanged.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/model.h"
#include "support/conv_bn_model.h"
#include "support/cli.h"

using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kModelCommands{"inspect", "fold", "upgrade", "eval"};

std::vector<std::string> command_args(const std::string& cmd, const fs::path& model, const fs::path& out_dir) {
  if (cmd == "inspect") return {"inspect", model.string()};
  if (cmd == "eval") return {"eval", model.string(), "--random", "0"};
  return {cmd, model.string(), "-o", (out_dir / "out.onnx").string()};
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Runs `commands` on `model` and checks each refuses it as described above;
// `node` empty: the message names no node.
void check_refused(const fs::path& model, const std::string& expect, const std::string& node,
                   const std::vector<std::string>& commands = kModelCommands) {
  const bool existed = fs::exists(model);
  const std::string before = fs::is_regular_file(model) ? read_file(model) : "";
  for (const auto& cmd : commands) {
    TempDir out;
    const auto r = run_cli(command_args(cmd, model, out.path()));
    INFO(cmd << " " << model.string() << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    const std::string prefix =
        "bnorm: error: " + model.string() + ": " + (node.empty() ? std::string() : "node '" + node + "' (");
    CHECK(r.err.rfind(prefix, 0) == 0);
    if (node.empty()) CHECK(r.err.find("node '") == std::string::npos);
    CHECK(r.err.find(expect) != std::string::npos);
    CHECK(lines(r.err) <= 2);
    CHECK(entries(out.path()) == 0);
    CHECK(fs::exists(model) == existed);
    if (fs::is_regular_file(model)) CHECK(read_file(model) == before);
  }
}

}  // namespace

TEST_CASE("the base model of the matrix is accepted by every command", "[cli][errors]") {
  // Guards the matrix: each case below differs from this model in one thing.
  TempDir tmp;
  const auto model = save(tmp, "good.onnx", conv_bn());
  for (const auto& cmd : kModelCommands) {
    TempDir out;
    const auto r = run_cli(command_args(cmd, model, out.path()));
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(entries(out.path()) == (cmd == "fold" || cmd == "upgrade" ? 1u : 0u));
  }
}

TEST_CASE("unreadable files are refused by every command, naming the file", "[cli][errors]") {
  TempDir tmp;
  write_file(tmp / "empty.onnx", "");
  write_file(tmp / "junk.onnx", "\x08\x96\x01 this is not a model");
  std::string good;
  REQUIRE(conv_bn().SerializeToString(&good));
  write_file(tmp / "truncated.onnx", good.substr(0, good.size() / 2));
  fs::create_directories(tmp / "dir.onnx");
  SECTION("missing") { check_refused(tmp / "missing.onnx", "no such file", ""); }
  SECTION("a directory") {
    check_refused(tmp / "dir.onnx", "is a directory", "", {"inspect", "fold", "upgrade"});
    // eval takes folders of ONNX's backend tests; one with none is an error too.
    const auto r = run_cli({"eval", (tmp / "dir.onnx").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "bnorm: error: " + (tmp / "dir.onnx").string() +
                       ": holds no test folder (a folder with model.onnx and test_data_set_*)\n");
    const auto f = run_cli({"eval", std::string(ONNX_TESTDATA_DIR) + "/node", "--filter", "no_such_test*"});
    CHECK(f.exit_code == 2);
    CHECK(f.err == "bnorm: error: --filter 'no_such_test*' matches no test folder\n");
  }
  SECTION("empty") { check_refused(tmp / "empty.onnx", "is empty", ""); }
  SECTION("random bytes") { check_refused(tmp / "junk.onnx", "not an ONNX model", ""); }
  SECTION("truncated") { check_refused(tmp / "truncated.onnx", "not an ONNX model", ""); }
  SECTION("a tensor .pb") { check_refused(testdata("tensors/f32_raw.pb"), "not an ONNX model", ""); }
}

TEST_CASE("random bytes never crash any command and never leave an output", "[cli][errors]") {
  TempDir tmp;
  uint32_t state = 12345;
  for (int i = 0; i < 12; ++i) {
    std::string bytes(static_cast<size_t>(1 + i * 97), '\0');
    for (auto& c : bytes) {
      state = state * 1664525u + 1013904223u;
      c = static_cast<char>(state >> 24);
    }
    write_file(tmp / "r.onnx", bytes);
    for (const auto& cmd : kModelCommands) {
      TempDir out;
      const auto r = run_cli(command_args(cmd, tmp / "r.onnx", out.path()));
      INFO(i << " " << cmd << ": " << r.err);
      REQUIRE((r.exit_code == 0 || r.exit_code == 2));
      if (r.exit_code == 2) CHECK(entries(out.path()) == 0);
      CHECK(read_file(tmp / "r.onnx") == bytes);
    }
  }
}

TEST_CASE("invalid graphs are refused by every command, naming the file and the node", "[cli][errors]") {
  TempDir tmp;
  auto m = conv_bn();
  SECTION("a node input that names no value") {
    node(m, "bn1").set_input(1, "nothing");
    check_refused(save(tmp, "undefined.onnx", m), "input 'nothing' names no value of the graph", "bn1");
  }
  SECTION("a cycle") {
    node(m, "conv1").set_input(0, "y");
    check_refused(save(tmp, "cycle.onnx", m), "the graph has a cycle through this node", "conv1");
    // The node's op with its schema version, as docs/cli.md documents every error (was "(Conv)").
    CHECK(run_cli({"inspect", (tmp / "cycle.onnx").string()}).err ==
          "bnorm: error: " + (tmp / "cycle.onnx").string() +
              ": node 'conv1' (Conv-11): the graph has a cycle through this node\n");
  }
  SECTION("a name two nodes make (found by fuzz_fold: fold --verify read a null producer)") {
    node(m, "bn1").set_output(0, node(m, "conv1").output(0));
    check_refused(save(tmp, "not-ssa.onnx", m), "is already a value of its graph", "bn1");
  }
  SECTION("BatchNormalization with four inputs") {
    node(m, "bn1").mutable_input()->RemoveLast();
    check_refused(save(tmp, "bn4.onnx", m), "4 inputs, expected 5", "bn1");
  }
  SECTION("BatchNormalization with six inputs") {
    node(m, "bn1").add_input("v");
    check_refused(save(tmp, "bn6.onnx", m), "6 inputs, expected 5", "bn1");
  }
  SECTION("an empty required input") {
    node(m, "bn1").set_input(2, "");
    check_refused(save(tmp, "empty_input.onnx", m), "input 'B' is empty", "bn1");
  }
  SECTION("a negative declared dim") {
    declare(m.mutable_graph()->mutable_input(0), "x", {1, 3, -4, 4});
    check_refused(save(tmp, "neg_declared.onnx", m), "value 'x' is declared with dim 2 = -4", "");
  }
}

TEST_CASE("bad BatchNormalization parameters are refused by every command, naming the node", "[cli][errors]") {
  TempDir tmp;
  auto m = conv_bn();
  SECTION("parameters of different sizes") {
    initializer(m, "s") = floats("s", {4}, {1, 1, 1, 1});
    check_refused(save(tmp, "sizes.onnx", m), "input 'B' has 3 elements, input 'scale' has 4", "bn1");
  }
  SECTION("parameters that disagree with X's declared channels") {
    // X is a graph input declared [1, 3, 4, 4]; every parameter has 4 elements.
    auto& bn = node(m, "bn1");
    bn.set_input(0, "x");
    m.mutable_graph()->mutable_output(0)->set_name("y");
    m.mutable_graph()->mutable_node()->DeleteSubrange(0, 1);  // conv1 goes
    for (const char* p : {"s", "B", "m", "v"}) initializer(m, p) = floats(p, {4}, {1, 1, 1, 1});
    for (const char* p : {"w", "b"}) {
      auto* inits = m.mutable_graph()->mutable_initializer();
      for (int i = 0; i < inits->size(); ++i)
        if (inits->Get(i).name() == p) inits->DeleteSubrange(i, 1);
    }
    check_refused(save(tmp, "channels.onnx", m), "input 'scale' has shape [4], expected [3]", "bn1");
  }
  SECTION("an integer-typed parameter") {
    auto& v = initializer(m, "v");
    v.set_data_type(onnx::TensorProto::INT32);  // 12 bytes: three int32
    check_refused(save(tmp, "int_var.onnx", m), "input 'input_var' has type int32, expected a floating type", "bn1");
  }
}

TEST_CASE("parameters whose size differs from the producer's channels are an error, not a kept node",
          "[cli][errors][fold]") {
  // Nothing declares C: the four parameters agree with each other ([4]) but
  // conv1 makes 3 channels. fold used to keep the node and write the model.
  TempDir tmp;
  auto m = conv_bn();
  for (const char* p : {"s", "B", "m", "v"}) initializer(m, p) = floats(p, {4}, {1, 1, 1, 1});
  m.mutable_graph()->mutable_output(0)->clear_type();
  const auto model = save(tmp, "c4.onnx", m);
  check_refused(model, "input 'scale' has shape [4], but X has 3 channels (Conv 'conv1' makes 3)", "bn1",
                {"inspect", "fold"});
  check_refused(model, "expected [3]", "bn1", {"eval"});
}

TEST_CASE("tensors whose dims and data disagree are refused by every command, naming the tensor", "[cli][errors]") {
  TempDir tmp;
  auto m = conv_bn();
  auto& s = initializer(m, "s");
  SECTION("dims whose product overflows") {
    s.clear_dims();
    for (int i = 0; i < 3; ++i) s.add_dims(int64_t{1} << 32);
    check_refused(save(tmp, "overflow.onnx", m), "tensor 's': dims [4294967296, 4294967296, 4294967296]: element "
                                                 "count overflows int64", "");
  }
  SECTION("dims that do not match the data") {
    s.set_dims(0, 4);
    check_refused(save(tmp, "dims.onnx", m), "tensor 's': raw_data has 12 bytes, dims [4] of float need 16", "");
  }
  SECTION("negative dims") {
    s.set_dims(0, -3);
    check_refused(save(tmp, "negative.onnx", m), "tensor 's': dims [-3]: dim 0 is negative", "");
  }
  SECTION("raw_data of the wrong length") {
    s.mutable_raw_data()->resize(10);
    check_refused(save(tmp, "raw.onnx", m), "tensor 's': raw_data has 10 bytes, dims [3] of float need 12", "");
  }
  SECTION("a typed field of the wrong length") {
    s.clear_raw_data();
    s.add_float_data(1.0f);
    check_refused(save(tmp, "typed.onnx", m), "tensor 's': float_data has 1 values, dims [3] of float need 3", "");
  }
}

TEST_CASE("a Constant node whose tensor disagrees with its dims is refused, naming the node", "[cli][errors]") {
  TempDir tmp;
  auto m = conv_bn();
  // The scale comes from a Constant node instead of an initializer.
  auto* inits = m.mutable_graph()->mutable_initializer();
  for (int i = 0; i < inits->size(); ++i)
    if (inits->Get(i).name() == "s") inits->DeleteSubrange(i, 1);
  auto* c = m.mutable_graph()->add_node();
  c->set_name("const_s");
  c->set_op_type("Constant");
  c->add_output("s");
  auto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = floats("", {3}, {1.0f, 1.0f});
  check_refused(save(tmp, "constant.onnx", m), "unnamed tensor: raw_data has 8 bytes, dims [3] of float need 12",
                "const_s");
}

TEST_CASE("NaN and negative variances evaluate per IEEE, fold warns naming the node", "[cli][errors][fold]") {
  TempDir tmp;
  auto m = conv_bn();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  initializer(m, "v") = floats("v", {3}, {1.0f, nan, -1.0f});
  const auto model = save(tmp, "nan_var.onnx", m);
  const std::string before = read_file(model);

  const auto f = run_cli({"fold", model.string(), "-o", (tmp / "folded.onnx").string(), "--json"});
  CHECK(f.exit_code == 0);
  CHECK(f.err.rfind("bnorm: warning: node 'bn1': input_var + epsilon is NaN or not positive in 2 of 3 channels", 0) ==
        0);
  const auto j = nlohmann::json::parse(f.out);
  CHECK(j["folded"].size() == 1);
  REQUIRE(j["warnings"].size() == 1);
  CHECK(j["warnings"][0].get<std::string>().find("node 'bn1'") == 0);
  CHECK(fs::exists(tmp / "folded.onnx"));

  // Channel 0 is finite, channels 1 and 2 NaN, in the original and the fold alike.
  for (const auto& path : {model, tmp / "folded.onnx"}) {
    const auto e = run_cli({"eval", path.string(), "--random", "0", "--json"});
    INFO(path.string() << ": " << e.err);
    REQUIRE(e.exit_code == 0);
    const auto out = nlohmann::json::parse(e.out)["outputs"][0];
    CHECK(out["name"] == "y");
    CHECK(out["mean"].is_null());  // NaN prints as null in JSON
  }
  const auto cmp = run_cli({"eval", model.string(), "--compare", (tmp / "folded.onnx").string()});
  CHECK(cmp.exit_code == 0);  // NaN matches NaN
  CHECK(run_cli({"inspect", model.string()}).exit_code == 0);
  CHECK(run_cli({"upgrade", model.string(), "-o", (tmp / "up.onnx").string()}).exit_code == 0);
  CHECK(read_file(model) == before);
}

TEST_CASE("external data outside the model's directory, past its file's end or missing is refused by every command",
          "[cli][errors][external]") {
  const std::string hint = "locations must be relative paths inside the model's directory";
  SECTION("an absolute location") {
    check_refused(testdata("external_bad/abs_location.onnx"),
                  "external data location '/etc/hostname' is an absolute path (tensor 'bn1.scale')\n  hint: " + hint, "");
  }
  SECTION("a location with '..'") {
    check_refused(testdata("external_bad/dotdot_location.onnx"),
                  "external data location '../external/weights.bin' leaves the model's directory (tensor 'bn1.scale')",
                  "");
  }
  SECTION("a range past the end of the side file") {
    check_refused(testdata("external_bad/past_end.onnx"),
                  "tensor 'bn1.scale': external data [4, 16) is past the end of 'short.bin' (8 bytes)", "");
  }
  SECTION("a missing side file") {
    check_refused(testdata("external_bad/missing_file.onnx"),
                  "tensor 'bn1.scale': external data file 'nope.bin' does not exist", "");
  }
  TempDir tmp;
  fs::create_directories(tmp / "m");
  fs::create_directories(tmp / "outside");
  fs::copy_file(testdata("external/model.onnx"), tmp / "m" / "model.onnx");
  const std::string weights = read_file(testdata("external/weights.bin"));
  SECTION("a side file that is a symlink out of the directory") {
    write_file(tmp / "outside" / "weights.bin", weights);
    fs::create_symlink(tmp / "outside" / "weights.bin", tmp / "m" / "weights.bin");
    check_refused(tmp / "m" / "model.onnx", "external data location 'weights.bin' resolves outside the model's directory",
                  "");
  }
  SECTION("a dangling symlink out of the directory") {
    fs::create_symlink(tmp / "outside" / "nothing.bin", tmp / "m" / "weights.bin");
    check_refused(tmp / "m" / "model.onnx", "external data location 'weights.bin' resolves outside the model's directory",
                  "");
  }
  SECTION("a side file shorter than its tensors") {
    write_file(tmp / "m" / "weights.bin", weights.substr(0, 100));
    check_refused(tmp / "m" / "model.onnx", "is past the end of 'weights.bin' (100 bytes)", "");
  }
  SECTION("a symlink that stays inside is accepted") {
    fs::create_directories(tmp / "m" / "real");
    write_file(tmp / "m" / "real" / "w.bin", weights);
    fs::create_symlink("real/w.bin", tmp / "m" / "weights.bin");
    for (const auto& cmd : kModelCommands) {
      TempDir out;
      const auto r = run_cli(command_args(cmd, tmp / "m" / "model.onnx", out.path()));
      INFO(cmd << ": " << r.err);
      CHECK(r.exit_code == 0);
    }
  }
}

TEST_CASE("eval --random on declared dims too large to hold names the file and the input", "[cli][errors][eval]") {
  TempDir tmp;
  auto m = conv_bn();
  declare(m.mutable_graph()->mutable_input(0), "x", {1, 3, int64_t{1} << 62, 4});
  const auto model = save(tmp, "huge.onnx", m);
  const auto r = run_cli({"eval", model.string(), "--random", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("bnorm: error: " + model.string() + ": input 'x': dims [1, 3, 4611686018427387904, 4]: element "
                    "count overflows int64\n  hint: ", 0) == 0);
}

// ONNX 1.12's own shape inference crashed the process on these Conv nodes
// (a null dereference, a division by zero; found by fuzz_inspect and CI's
// fuzz smoke run). Every command refuses them, naming the node.
TEST_CASE("Conv nodes that crashed ONNX's shape inference are refused by every command, naming the node",
          "[cli][errors]") {
  TempDir tmp;
  auto m = conv_bn();
  auto& conv = node(m, "conv1");
  std::string expect;
  SECTION("a ConvTranspose whose W has rank 1") {
    conv.set_op_type("ConvTranspose");
    conv.mutable_attribute()->DeleteSubrange(0, 1);  // kernel_shape: W's dims are read instead
    initializer(m, "w").clear_dims();
    initializer(m, "w").add_dims(81);
    expect = "input 'W' has rank 1 and input 'X' rank 4; W must have the rank of X, at least 3";
  }
  SECTION("a Conv whose W has rank 5 against X's 4") {
    conv.mutable_attribute()->DeleteSubrange(0, 1);
    initializer(m, "w").add_dims(1);
    expect = "input 'W' has rank 5 and input 'X' rank 4";
  }
  SECTION("a Conv with a stride of 0") {
    auto* a = conv.add_attribute();
    a->set_name("strides");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(0);
    a->add_ints(1);
    expect = "attribute 'strides' has a value 0; each must be at least 1";
  }
  check_refused(save(tmp, "conv.onnx", m), expect, "conv1");
}

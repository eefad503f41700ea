// What real models showed (issue 17): every node is named in reports even
// without a name, every problem of a kind is reported at once, nothing is
// silently ignored, and every message follows bnorm's format.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/conv_bn_model.h"
#include "support/cli.h"

namespace fs = std::filesystem;
using namespace bnorm::test;

namespace {

// conv_bn() with its nodes' names cleared, as many exporters write them.
onnx::ModelProto unnamed() {
  onnx::ModelProto m = conv_bn();
  for (auto& n : *m.mutable_graph()->mutable_node()) n.clear_name();
  return m;
}

// conv_bn() with x declared [batch, 3, height, width].
onnx::ModelProto symbolic() {
  onnx::ModelProto m = conv_bn();
  auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("batch");
  shape->mutable_dim(2)->set_dim_param("height");
  shape->mutable_dim(3)->set_dim_param("width");
  return m;
}

}  // namespace

TEST_CASE("fold names unnamed nodes by op, index and first output, in text and JSON", "[cli][labels]") {
  TempDir tmp;
  const auto in = save(tmp, "m.onnx", unnamed());
  const auto text = run_cli({"fold", in.string(), "-o", (tmp / "f.onnx").string(), "--verify"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("folded   BatchNormalization #1 -> 'y' into Conv #0 -> 'c'"));
  CHECK_THAT(text.out, Catch::Contains("verified   BatchNormalization #1 -> 'y' into Conv #0 -> 'c' on X"));
  CHECK(text.out.find("''") == std::string::npos);
  const auto json = run_cli({"fold", in.string(), "-o", (tmp / "g.onnx").string(), "--json"});
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["folded"][0]["bn"] == "");
  CHECK(j["folded"][0]["bn_label"] == "BatchNormalization #1 -> 'y'");
  CHECK(j["folded"][0]["bn_index"] == 1);
  CHECK(j["folded"][0]["producer_label"] == "Conv #0 -> 'c'");
}

TEST_CASE("inspect names unnamed nodes, shows each op's resolved version and what eval cannot run",
          "[cli][labels][inspect]") {
  TempDir tmp;
  const auto in = save(tmp, "m.onnx", unnamed());
  const auto r = run_cli({"inspect", in.string()});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("BatchNormalization-9 1, Conv-11 1"));
  CHECK_THAT(r.out, Catch::Contains("eval       bnorm eval runs every node"));
  CHECK_THAT(r.out, Catch::Contains("BatchNormalization #1 -> 'y' (BatchNormalization-9, graph main)"));
  const auto j = nlohmann::json::parse(run_cli({"inspect", in.string(), "--json"}).out);
  CHECK(j["norm_nodes"][0]["label"] == "BatchNormalization #1 -> 'y'");
  CHECK(j["op_versions"]["Conv"] == 11);

  onnx::ModelProto odd = conv_bn();
  odd.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  const auto o = run_cli({"inspect", save(tmp, "odd.onnx", odd).string()});
  CHECK_THAT(o.out, Catch::Contains("eval       cannot run NoSuchOp (1 node)"));
  // ai.onnx.preview's FlexAttention runs; another op of that domain does not.
  const std::string flex = testdata("onnx-node-1.23/test_flexattention_score_mod/model.onnx").string();
  CHECK_THAT(run_cli({"inspect", flex}).out, Catch::Contains("eval       bnorm eval runs every node"));
  onnx::ModelProto other;
  REQUIRE(other.ParseFromString(read_file(flex)));
  other.mutable_graph()->mutable_node(0)->set_op_type("FlexDecoding");
  CHECK_THAT(run_cli({"inspect", save(tmp, "other.onnx", other).string()}).out,
             Catch::Contains("eval       cannot run ai.onnx.preview.FlexDecoding (1 node)"));
}

TEST_CASE("InstanceNormalization's types are shown as its schema names them: T only, from its parameters when X's is "
          "unknown",
          "[cli][inspect]") {
  TempDir tmp;
  onnx::ModelProto m = conv_bn();
  auto* bn = m.mutable_graph()->mutable_node(1);
  bn->set_op_type("InstanceNormalization");
  while (bn->input_size() > 3) bn->mutable_input()->RemoveLast();
  const auto r = run_cli({"inspect", save(tmp, "in.onnx", m).string()});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("types       T=float\n"));
  CHECK(r.out.find("T1=") == std::string::npos);
}

TEST_CASE("eval lists every input without data at once and says how to give them", "[cli][eval]") {
  const auto r = run_cli({"eval", testdata("demo_opset6.onnx").string()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no data for input 'input'"));
  CHECK_THAT(r.err, Catch::Contains("--input NAME=FILE"));
  CHECK_THAT(r.err, Catch::Contains("--random SEED"));
}

TEST_CASE("eval lists every symbolic dim without a size at once, and refuses a --dim the model does not have",
          "[cli][eval]") {
  TempDir tmp;
  const auto in = save(tmp, "s.onnx", symbolic()).string();
  const auto all = run_cli({"eval", in, "--random", "1"});
  CHECK(all.exit_code == 2);
  CHECK_THAT(all.err, Catch::Contains("3 symbolic dims need a size: 'batch' (input 'x', dim 0), 'height' (input 'x', "
                                      "dim 2), 'width' (input 'x', dim 3)"));
  const auto some = run_cli({"eval", in, "--random", "1", "--dim", "batch=1", "--dim", "height=4"});
  CHECK_THAT(some.err, Catch::Contains("1 symbolic dim needs a size: 'width'"));
  const auto typo = run_cli({"eval", in, "--random", "1", "--dim", "btach=1"});
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("--dim btach: the model has no symbolic dim 'btach'; its symbolic dims are batch, "
                                       "height, width"));
  const auto ok = run_cli({"eval", in, "--random", "1", "--dim", "batch=1", "--dim", "height=4", "--dim", "width=5"});
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("y: float [1, 3, 4, 5]"));
  const auto no_random = run_cli({"eval", in, "--dim", "batch=1"});
  CHECK(no_random.exit_code == 2);
  CHECK_THAT(no_random.err, Catch::Contains("--dim sizes the inputs --random makes"));
}

TEST_CASE("a declared dim of -1 is an unknown dim that --dim INPUT[i] sizes", "[cli][eval]") {
  TempDir tmp;
  onnx::ModelProto m = conv_bn();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-1);
  const auto in = save(tmp, "neg.onnx", m).string();
  const auto need = run_cli({"eval", in, "--random", "1"});
  CHECK(need.exit_code == 2);
  CHECK_THAT(need.err, Catch::Contains("'x[0]' (input 'x', dim 0)"));
  const auto ok = run_cli({"eval", in, "--random", "1", "--dim", "x[0]=2"});
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("y: float [2, 3, 4, 4]"));
}

TEST_CASE("eval --output-dir is made before the model runs, or refused", "[cli][eval]") {
  TempDir tmp;
  const auto made = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--random", "1", "--output-dir",
                             (tmp / "a" / "b").string()});
  CHECK(made.exit_code == 0);
  CHECK(fs::is_directory(tmp / "a" / "b"));
  write_file(tmp / "file", "x");
  const auto refused = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--random", "1", "--output-dir",
                                (tmp / "file").string()});
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("--output-dir"));
}

TEST_CASE("eval --compare says which model an input does not fit", "[cli][eval]") {
  TempDir tmp;
  onnx::ModelProto other = conv_bn();
  auto* d = other.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2);
  d->set_dim_value(8);
  const auto a = save(tmp, "a.onnx", conv_bn()).string();
  const auto b = save(tmp, "b.onnx", other).string();
  const auto r = run_cli({"eval", a, "--compare", b, "--random", "1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(b));
  CHECK_THAT(r.err, Catch::Contains("in the second model"));
}

TEST_CASE("a test folder given with a trailing slash is named by its folder", "[cli][eval]") {
  const fs::path folder = testdata("onnx-node-1.23") / "test_relu";
  const auto r = run_cli({"eval", folder.string() + "/"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("PASS test_relu\n"));
}

TEST_CASE("fold with nothing to fold says the output is a copy, and --no-copy writes nothing", "[cli][fold]") {
  TempDir tmp;
  onnx::ModelProto m = conv_bn();
  m.mutable_graph()->mutable_node(1)->set_op_type("InstanceNormalization");
  while (m.mutable_graph()->mutable_node(1)->input_size() > 3) m.mutable_graph()->mutable_node(1)->mutable_input()->RemoveLast();
  const auto in = save(tmp, "in.onnx", m).string();
  const auto copy = run_cli({"fold", in, "-o", (tmp / "copy.onnx").string()});
  CHECK(copy.exit_code == 0);
  CHECK_THAT(copy.out, Catch::Contains("nothing to fold: wrote"));
  CHECK_THAT(copy.out, Catch::Contains("an unchanged copy of the input"));
  CHECK(fs::exists(tmp / "copy.onnx"));
  const auto none = run_cli({"fold", in, "-o", (tmp / "none.onnx").string(), "--no-copy"});
  CHECK(none.exit_code == 0);
  CHECK_THAT(none.out, Catch::Contains("nothing written (--no-copy)"));
  CHECK_FALSE(fs::exists(tmp / "none.onnx"));
}

TEST_CASE("upgrade says 'downgraded' going down and 'nothing to convert' at the same opset", "[cli][upgrade]") {
  TempDir tmp;
  const auto in = save(tmp, "m.onnx", conv_bn()).string();
  const auto down = run_cli({"upgrade", in, "-o", (tmp / "d.onnx").string(), "--to", "9"});
  CHECK(down.exit_code == 0);
  CHECK_THAT(down.out, Catch::StartsWith("downgraded " + in + " from opset 13"));
  const auto same = run_cli({"upgrade", in, "-o", (tmp / "s.onnx").string(), "--to", "13"});
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.out, Catch::StartsWith(in + " is already at opset 13"));
  CHECK_THAT(same.out, Catch::Contains("nothing to convert"));
}

TEST_CASE("command-line parse errors follow bnorm's format with a usage hint, exit 2", "[cli]") {
  const auto missing = run_cli({"eval"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::StartsWith("bnorm: error: "));
  CHECK_THAT(missing.err, Catch::Contains("hint: 'bnorm eval --help' shows the usage"));
  const auto bad = run_cli({"eval", "m.onnx", "--random", "abc"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::StartsWith("bnorm: error: "));
  const auto unknown = run_cli({"frob"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err ==
        "bnorm: error: unknown command 'frob'\n  hint: the commands are inspect, fold, eval and upgrade ('bnorm help' "
        "says more)\n");
}

TEST_CASE("inspect lists every node of the normalization family with its attributes, defaults and parameters",
          "[cli][inspect]") {
  const auto ln = run_cli({"inspect", testdata("onnx-node-1.23/test_layer_normalization_4d_axis0/model.onnx").string()});
  REQUIRE(ln.exit_code == 0);
  CHECK_THAT(ln.out, Catch::Contains("1 normalization node, 0 foldable"));
  CHECK_THAT(ln.out, Catch::Contains("attributes  axis=0  epsilon=1e-05 (default)  stash_type=1 (default)"));
  CHECK_THAT(ln.out, Catch::Contains("scale       [2, 3, 4, 5] float from graph input 'W'"));
  const auto gn = nlohmann::json::parse(
      run_cli({"inspect", testdata("onnx-node-1.23/test_group_normalization_example/model.onnx").string(), "--json"})
          .out);
  REQUIRE(gn["norm_nodes"].size() == 1);
  CHECK(gn["norm_nodes"][0]["op"] == "GroupNormalization");
  CHECK(gn["norm_nodes"][0]["version"] == 21);
  CHECK(gn["norm_nodes"][0]["attributes"]["num_groups"] == "2");
  CHECK(gn["norm_nodes"][0]["foldable"] == false);
}

TEST_CASE("inspect --to N lists every node that blocks opset N first, then each node's planned conversion",
          "[cli][inspect][upgrade]") {
  TempDir tmp;
  // Two HardSwish nodes cannot go below 14; Relu goes down type-only. (LayerNormalization,
  // which this used, is now lowered below 17: docs/upgrade.md, "Lowering".)
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (const char* name : {"ln1", "ln2"}) {
    auto* n = g->add_node();
    n->set_op_type("HardSwish");
    n->set_name(name);
    n->add_input(name == std::string("ln1") ? "x" : "a");
    n->add_output(name == std::string("ln1") ? "a" : "b");
  }
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("b");
  relu->add_output("y");
  *g->add_initializer() = floats("s", {4}, {1, 1, 1, 1});
  declare(g->add_input(), "x", {2, 4});
  declare(g->add_output(), "y", {2, 4});
  const auto in = save(tmp, "ln.onnx", m).string();
  const auto r = run_cli({"inspect", in, "--summary", "--to", "13"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("upgrade to opset 13"));
  CHECK_THAT(r.out, Catch::Contains("2 nodes block it"));
  CHECK_THAT(r.out, Catch::Contains("'ln1'"));
  CHECK_THAT(r.out, Catch::Contains("'ln2'"));
  const auto j = nlohmann::json::parse(run_cli({"inspect", in, "--json", "--to", "13"}).out);
  CHECK(j["upgrade_plan"]["to_opset"] == 13);
  CHECK(j["upgrade_plan"]["blockers"].size() == 2);
}

TEST_CASE("inspect --fp16 names the normalization parameters float16 cannot hold, and measures inputs with --random",
          "[cli][inspect][fp16]") {
  TempDir tmp;
  onnx::ModelProto m = conv_bn();
  initializer(m, "v") = floats("v", {3}, {1.0f, 1e5f, 4.0f});  // above 65504: inf in float16
  auto* eps = m.mutable_graph()->mutable_node(1)->add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(1e-9f);  // rounds to 0 in float16
  const auto in = save(tmp, "risky.onnx", m).string();
  const auto r = run_cli({"inspect", in, "--summary", "--fp16"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("float16 risks (parameters only): 2"));
  CHECK_THAT(r.out, Catch::Contains("bn1 (BatchNormalization) overflow input_var"));
  CHECK_THAT(r.out, Catch::Contains("bn1 (BatchNormalization) epsilon_zero"));
  const auto j = nlohmann::json::parse(run_cli({"inspect", in, "--json", "--fp16", "--random", "1"}).out);
  REQUIRE(j["fp16_risks"].size() == 2);
  const auto clean = run_cli({"inspect", save(tmp, "clean.onnx", conv_bn()).string(), "--summary", "--fp16"});
  CHECK_THAT(clean.out, Catch::Contains("float16 risks (parameters only): none"));
  const auto stray = run_cli({"inspect", in, "--random", "1"});
  CHECK(stray.exit_code == 2);
  CHECK_THAT(stray.err, Catch::Contains("go with --fp16"));
}

TEST_CASE("upgrade names a node without a name by its label when it blocks the target", "[cli][labels][upgrade]") {
  TempDir tmp;
  // (LayerNormalization, which this used, is now lowered below 17: docs/upgrade.md, "Lowering".)
  const auto r = run_cli({"upgrade", testdata("onnx-node-1.23/test_blackmanwindow/model.onnx").string(),
                          "-o", (tmp / "o.onnx").string(), "--to", "16"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("BlackmanWindow -> 'y' (BlackmanWindow-17)"));
  CHECK(r.err.find("node ''") == std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "o.onnx"));
}

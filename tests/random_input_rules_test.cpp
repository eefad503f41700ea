// Random integer inputs that the node reading them accepts (indices, K,
// batch_indices, shapes: eval/run/input_rules.h), --input-range, and
// upgrade --verify on one-node models that need them (issue 25).
#include <catch2/catch.hpp>

#include <functional>
#include <set>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/run/random_inputs.h"
#include "support/cli.h"
#include "support/error_of.h"
#include "support/upgrade_support.h"
#include "transforms/upgrade/verify.h"

using namespace bnorm;
using namespace bnorm::test;

namespace {

struct Case {
  std::string name;
  int64_t opset, to;  // built at, upgraded to
  std::function<void(TestNet&)> build;
  std::string input;                                       // the integer input the rule covers
  std::function<void(size_t i, int64_t v)> in_range;       // checks element i
};

void value_in(int64_t v, int64_t lo, int64_t hi) {
  INFO("value " << v << " in [" << lo << ", " << hi << "]");
  CHECK((v >= lo && v <= hi));
}

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"Gather", 13, 17, [](TestNet& n) {
                 n.input("D", DType::float32, {3, 2});
                 n.input("I", DType::int64, {4, 3});
                 set_attr(n.node("Gather", {"D", "I"}, {"Y"}, "g"), "axis", int64_t{-1});
                 add_output(n.g(), "Y", DType::float32, {3, 4, 3});
               }, "I", [](size_t, int64_t v) { value_in(v, -2, 1); }});
  c.push_back({"GatherElements", 13, 17, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3});
                 n.input("I", DType::int32, {2, 3});
                 n.node("GatherElements", {"D", "I"}, {"Y"}, "g");
                 add_output(n.g(), "Y", DType::float32, {2, 3});
               }, "I", [](size_t, int64_t v) { value_in(v, -2, 1); }});
  c.push_back({"GatherND", 13, 17, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3});
                 n.input("I", DType::int64, {4, 2});
                 n.node("GatherND", {"D", "I"}, {"Y"}, "g");
                 add_output(n.g(), "Y", DType::float32, {4});
               }, "I", [](size_t i, int64_t v) { i % 2 == 0 ? value_in(v, -2, 1) : value_in(v, -3, 2); }});
  c.push_back({"Scatter", 10, 10, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3});
                 n.input("I", DType::int64, {2, 3});
                 n.input("U", DType::float32, {2, 3});
                 n.node("Scatter", {"D", "I", "U"}, {"Y"}, "s");
                 add_output(n.g(), "Y", DType::float32, {2, 3});
               }, "I", [](size_t, int64_t v) { value_in(v, 0, 1); }});
  c.push_back({"ScatterElements", 13, 17, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3});
                 n.input("I", DType::int64, {2, 3});
                 n.input("U", DType::float32, {2, 3});
                 n.node("ScatterElements", {"D", "I", "U"}, {"Y"}, "s");
                 add_output(n.g(), "Y", DType::float32, {2, 3});
               }, "I", [](size_t, int64_t v) { value_in(v, -2, 1); }});
  c.push_back({"ScatterElements add", 16, 18, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3});
                 n.input("I", DType::int64, {4, 3});
                 n.input("U", DType::float32, {4, 3});
                 set_string(n.node("ScatterElements", {"D", "I", "U"}, {"Y"}, "s"), "reduction", "add");
                 add_output(n.g(), "Y", DType::float32, {2, 3});
               }, "I", [](size_t, int64_t v) { value_in(v, -2, 1); }});
  c.push_back({"ScatterND", 13, 17, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3});
                 n.input("I", DType::int64, {3, 2});
                 n.input("U", DType::float32, {3});
                 n.node("ScatterND", {"D", "I", "U"}, {"Y"}, "s");
                 add_output(n.g(), "Y", DType::float32, {2, 3});
               }, "I", [](size_t i, int64_t v) { i % 2 == 0 ? value_in(v, -2, 1) : value_in(v, -3, 2); }});
  c.push_back({"RoiAlign", 10, 16, [](TestNet& n) {
                 n.input("X", DType::float32, {2, 1, 4, 4});
                 n.init("rois", DType::float32, {3, 4}, {0, 0, 2, 2, 1, 1, 3, 3, 0.5, 0, 3, 2});
                 n.input("B", DType::int64, {3});
                 n.node("RoiAlign", {"X", "rois", "B"}, {"Y"}, "r");
                 add_output(n.g(), "Y", DType::float32, {3, 1, 1, 1});
               }, "B", [](size_t, int64_t v) { value_in(v, 0, 1); }});
  c.push_back({"TopK", 11, 17, [](TestNet& n) {
                 n.input("X", DType::float32, {3, 2});
                 n.input("K", DType::int64, {1});
                 n.node("TopK", {"X", "K"}, {"V", "I"}, "t");
                 add_output(n.g(), "V", DType::float32, {});
                 add_output(n.g(), "I", DType::int64, {});
               }, "K", [](size_t, int64_t v) { value_in(v, 1, 2); }});
  c.push_back({"OneHot", 11, 17, [](TestNet& n) {
                 n.input("I", DType::int64, {5});
                 n.init("depth", DType::int64, {}, {3});
                 n.init("values", DType::float32, {2}, {0, 1});
                 n.node("OneHot", {"I", "depth", "values"}, {"Y"}, "o");
                 add_output(n.g(), "Y", DType::float32, {5, 3});
               }, "I", [](size_t, int64_t v) { value_in(v, -3, 2); }});
  c.push_back({"Reshape", 13, 17, [](TestNet& n) {
                 n.input("D", DType::float32, {2, 3, 2});
                 n.input("S", DType::int64, {2});
                 n.node("Reshape", {"D", "S"}, {"Y"}, "r");
                 add_output(n.g(), "Y", DType::float32, {2, 6});
               }, "S", [](size_t i, int64_t v) { CHECK(v == (i == 0 ? 2 : -1)); }});
  c.push_back({"ConstantOfShape", 13, 13, [](TestNet& n) {
                 n.input("S", DType::int64, {2});
                 n.node("ConstantOfShape", {"S"}, {"Y"}, "c");
                 add_output(n.g(), "Y", DType::float32, {});
               }, "S", [](size_t, int64_t v) { value_in(v, 1, 4); }});
  return c;
}

Model model_of(const Case& c) {
  TestNet n(c.opset);
  c.build(n);
  return n.m;
}

}  // namespace

TEST_CASE("random integer inputs lie where the node reading them accepts them, and upgrade --verify runs them",
          "[eval][random][upgrade]") {
  for (const auto& c : cases()) {
    INFO(c.name);
    const Model m = model_of(c);
    const Model after = c.to == c.opset ? m : converted(m, c.to);
    for (uint64_t seed = 0; seed < 6; ++seed) {
      INFO("seed " << seed);
      const auto inputs = random_inputs(m, seed, {});
      const auto values = *inputs.at(c.input).to_i64();
      for (size_t i = 0; i < values.size(); ++i) c.in_range(i, values[i]);
      CHECK_NOTHROW(evaluate(m, inputs));
      VerifyInputs in;
      in.seed = seed;
      for (const auto& check : verify_upgrade(m, after, in).outputs) {
        INFO(check.output << ": " << check.problem);
        CHECK(check.pass);
      }
    }
  }
}

TEST_CASE("random indices are the same for a seed, differ between seeds, and leave the other inputs as they were",
          "[eval][random]") {
  const Model m = model_of(cases()[0]);  // Gather(D [3, 2] float, I [4, 3] int64)
  CHECK(random_inputs(m, 5, {}).at("I").bytes == random_inputs(m, 5, {}).at("I").bytes);
  CHECK(random_inputs(m, 5, {}).at("I").bytes != random_inputs(m, 6, {}).at("I").bytes);
  // The same inputs read by Identity: no rule, the draws of before. D comes
  // first, I second: a covered I must not move what D draws, nor what an
  // input after it draws.
  TestNet plain(13);
  plain.input("I", DType::int64, {4, 3});
  plain.input("D", DType::float32, {3, 2});
  plain.node("Identity", {"I"}, {"Y"}, "i");
  add_output(plain.g(), "Y", DType::int64, {4, 3});
  TestNet ruled(13);
  ruled.input("I", DType::int64, {4, 3});
  ruled.input("D", DType::float32, {3, 2});
  set_attr(ruled.node("Gather", {"D", "I"}, {"Y"}, "g"), "axis", int64_t{-1});
  add_output(ruled.g(), "Y", DType::float32, {3, 4, 3});
  const auto a = random_inputs(plain.m, 3, {}), b = random_inputs(ruled.m, 3, {});
  CHECK(a.at("D").bytes == b.at("D").bytes);
  const auto plain_i = *a.at("I").to_i64();
  for (int64_t v : plain_i) CHECK((v >= 0 && v <= 3));
}

TEST_CASE("ScatterElements and ScatterND without a reduction draw no duplicate position", "[eval][random]") {
  TestNet n(13);
  n.input("D", DType::float32, {4, 3});
  n.input("I", DType::int64, {4, 3});
  n.input("U", DType::float32, {4, 3});
  n.node("ScatterElements", {"D", "I", "U"}, {"Y"}, "s");
  n.input("I2", DType::int64, {12, 2});
  n.input("U2", DType::float32, {12});
  n.node("ScatterND", {"D", "I2", "U2"}, {"Y2"}, "s2");
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const auto in = random_inputs(n.m, seed, {});
    const auto idx = *in.at("I").to_i64();
    for (int col = 0; col < 3; ++col) {
      std::set<int64_t> rows;
      for (int r = 0; r < 4; ++r) rows.insert((idx[r * 3 + col] + 4) % 4);
      CHECK(rows.size() == 4);  // a permutation of the column's rows
    }
    const auto t = *in.at("I2").to_i64();
    std::set<int64_t> cells;
    for (int k = 0; k < 12; ++k) cells.insert(((t[2 * k] + 4) % 4) * 3 + (t[2 * k + 1] + 3) % 3);
    CHECK(cells.size() == 12);  // every cell of D once
  }
}

TEST_CASE("an input read by two nodes takes what both accept, and nothing in common or an unknown dim is an Error",
          "[eval][random]") {
  TestNet n(13);
  n.input("A", DType::float32, {3});
  n.input("B", DType::float32, {5});
  n.input("I", DType::int64, {20});
  n.node("Gather", {"A", "I"}, {"Y"}, "ga");
  n.node("Gather", {"B", "I"}, {"Z"}, "gb");
  const auto both = *random_inputs(n.m, 1, {}).at("I").to_i64();
  for (int64_t v : both) value_in(v, -3, 2);

  TestNet none(13);
  none.input("X", DType::float32, {3, 2});
  none.input("D", DType::float32, {1});
  none.input("K", DType::int64, {1});
  none.node("TopK", {"X", "K"}, {"V", "J"}, "t");
  none.node("Gather", {"D", "K"}, {"Y"}, "g");
  const Error e = error_of([&] { random_inputs(none.m, 0, {}); });
  CHECK(e.kind() == ErrorKind::usage);
  CHECK_THAT(e.message(), Catch::Contains("K of TopK 't'") && Catch::Contains("indices of Gather 'g'") &&
                              Catch::Contains("no value is valid for both"));

  TestNet unknown(13);
  unknown.input("X", DType::float32, {3});
  unknown.input("I", DType::int64, {2});
  unknown.node("Foo", {"X"}, {"D"}, "foo").set_domain("com.example");
  unknown.node("Gather", {"D", "I"}, {"Y"}, "g");
  const Error u = error_of([&] { random_inputs(unknown.m, 0, {}); });
  CHECK(u.kind() == ErrorKind::usage);
  CHECK_THAT(u.message(), Catch::Contains("random input 'I'") && Catch::Contains("'D'"));
  CHECK_THAT(u.hint(), Catch::Contains("--input-range I=LO:HI"));
  // --input-range sets it instead.
  const auto ranged = *random_inputs(unknown.m, 0, {}, {}, {{"I", {0, 2}}}).at("I").to_i64();
  for (int64_t v : ranged) value_in(v, 0, 2);
}

TEST_CASE("input ranges set an input's values, over the node's rule, and are checked", "[eval][random]") {
  const Model m = model_of(cases()[0]);  // Gather(D [3, 2] float, I [4, 3] int64)
  const auto in = random_inputs(m, 2, {}, {}, {{"I", {0, 0}}, {"D", {5, 6}}});
  const auto zeros = *in.at("I").to_i64();
  for (int64_t v : zeros) CHECK(v == 0);
  for (double v : in.at("D").to_f64()) CHECK((v >= 5 && v < 6));
  CHECK(random_inputs(m, 2, {}, {}, {{"D", {5, 6}}}).at("D").bytes == in.at("D").bytes);
  // Not an input made here: named with the ones that are.
  Error e = error_of([&] { random_inputs(m, 2, {}, {}, {{"Y", {0, 1}}}); });
  CHECK(e.kind() == ErrorKind::usage);
  CHECK_THAT(e.message(), Catch::Contains("--input-range Y") && Catch::Contains("'D', 'I'"));
  std::map<std::string, Tensor> given{{"I", Tensor::from_f64(DType::int64, {4, 3}, std::vector<double>(12, 0))}};
  e = error_of([&] { random_inputs(m, 2, {}, given, {{"I", {0, 1}}}); });
  CHECK_THAT(e.message(), Catch::Contains("(it is given)"));
  // Integer inputs take whole numbers their type holds.
  e = error_of([&] { random_inputs(m, 2, {}, {}, {{"I", {0, 1.5}}}); });
  CHECK_THAT(e.message(), Catch::Contains("whole numbers"));
  // Without a seed, no random data: refused as --dim is.
  e = error_of([&] { complete_inputs(m, {}, std::nullopt, {}, {{"I", {0, 1}}}); });
  CHECK_THAT(e.message(), Catch::Contains("give --random SEED too"));
}

TEST_CASE("bnorm eval, upgrade and fold take --input-range with --random or --verify", "[eval][random][cli]") {
  TempDir tmp;
  Model m = model_of(cases()[0]);
  const std::string path = (tmp / "gather.onnx").string();
  save_model(m, path);
  auto r = run_cli({"eval", path, "--random", "1", "--input-range", "I=1:1", "--input-range", "D=2:3"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Y: float [3, 4, 3]  min 2") && Catch::Contains("max 2."));
  CHECK(run_cli({"eval", path, "--random", "4"}).exit_code == 0);
  CHECK(run_cli({"eval", path, "--compare", path, "--input-range", "I=0:1"}).exit_code == 0);
  r = run_cli({"eval", path, "--input-range", "I=0:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--input-range has no effect without --random"));
  r = run_cli({"eval", path, "--random", "1", "--input-range", "I=3:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("LO 3 is above HI 1"));
  r = run_cli({"eval", path, "--random", "1", "--input-range", "I=a:1"});
  CHECK_THAT(r.err, Catch::Contains("is not LO:HI"));
  r = run_cli({"eval", path, "--random", "1", "--input-range", "J=0:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("those are: 'D', 'I'"));
  const std::string out = (tmp / "up.onnx").string();
  r = run_cli({"upgrade", path, "-o", out, "--to", "17", "--verify", "--seed", "3", "--input-range", "I=-2:-1"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("verified"));
  r = run_cli({"upgrade", path, "-o", out, "--to", "17", "--input-range", "I=0:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--input-range has no effect without --verify"));
  const std::string demo = testdata("demo_opset6.onnx").string(), folded = (tmp / "f.onnx").string();
  CHECK(run_cli({"fold", demo, "-o", folded, "--verify", "--input-range", "input=0:1"}).exit_code == 0);
  r = run_cli({"fold", demo, "-o", folded, "--verify", "--input-range", "nope=0:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("is no graph input and the input of no fold verified; those are: ") && Catch::Contains("'input'"));
  r = run_cli({"fold", demo, "-o", folded, "--input-range", "input=0:1"});
  CHECK_THAT(r.err, Catch::Contains("--input-range has no effect without --verify"));
}

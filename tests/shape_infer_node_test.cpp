// bnorm's own shape inference (model/shape_infer) against ONNX's node
// tests: ONNX 1.23's (testdata/onnx-node-1.23) and ONNX 1.12's
// (/usr/share/libonnx-testdata/data/node). For each folder, the model's
// graph outputs lose their declared types, bnorm's inference runs alone
// (ONNX's is not called), and each output's inferred type and shape must be
// those of output_N.pb. Small inputs (at most 64 elements: shapes, axes,
// scales, pads...) are given their values from input_N.pb, as constants,
// the way a model that computes or stores them has them. A folder whose
// nodes all have rules is "covered": it must match, unless listed below
// with its reason. The uncovered ops are printed; the matched count may not
// fall below what it was measured at.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "model/shape_infer/rules.h"

namespace fs = std::filesystem;
using namespace bnorm;

namespace {

struct Tally {
  int total = 0, covered = 0, matched = 0;
  std::set<std::string> uncovered_ops;
  std::vector<std::string> problems;
};

bool read_tensor(const fs::path& p, onnx::TensorProto& t) {
  std::ifstream in(p, std::ios::binary);
  return in && t.ParseFromIstream(&in);
}

// Known mismatches of covered folders, by name prefix: the output's shape
// depends on values no rule reads.
struct Excused {
  const char* prefix;
  const char* why;
};
const Excused kExcused[] = {
    {"test_nonzero", "the number of non-zero elements is data"},
    {"test_cast_FLOAT_to_BFLOAT16", "ONNX 1.12's data stores the bfloat16 output as a uint16 tensor"},
    {"test_castlike_FLOAT_to_BFLOAT16", "ONNX 1.12's data stores the bfloat16 output as a uint16 tensor"},
};

bool excused(const std::string& name) {
  for (const auto& e : kExcused)
    if (name.rfind(e.prefix, 0) == 0) return true;
  return false;
}

void run_folder(const fs::path& dir, Tally& t) {
  onnx::ModelProto m;
  {
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!in || !m.ParseFromIstream(&in)) return;
  }
  onnx::GraphProto& g = *m.mutable_graph();
  std::vector<onnx::TensorProto> expected;
  for (int i = 0; i < g.output_size(); ++i) {
    if (!g.output(i).type().has_tensor_type()) return;
    onnx::TensorProto e;
    if (!read_tensor(dir / "test_data_set_0" / fmt::format("output_{}.pb", i), e)) return;
    expected.push_back(e);
  }
  std::set<std::string> inits;
  for (const auto& x : g.initializer()) inits.insert(x.name());
  int k = 0;
  for (const auto& in : g.input()) {
    if (inits.count(in.name())) continue;
    const fs::path p = dir / "test_data_set_0" / fmt::format("input_{}.pb", k++);
    onnx::TensorProto v;
    if (!in.type().has_tensor_type() || !read_tensor(p, v)) continue;
    int64_t n = 1;
    for (int64_t d : v.dims()) n *= d;
    if (n > kMaxPropagated) continue;
    v.set_name(in.name());
    *g.add_initializer() = v;
  }
  for (auto& o : *g.mutable_output()) o.clear_type();
  ++t.total;
  bool covered = true;
  for (const auto& n : g.node()) {
    if ((n.domain().empty() || n.domain() == "ai.onnx") && shape_infer::rules().count(n.op_type())) continue;
    if (n.domain() == "ai.onnx.preview" && shape_infer::preview_rules().count(n.op_type())) continue;
    covered = false;
    t.uncovered_ops.insert(n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type());
  }
  const ModelShapes shapes = infer_model_shapes(m);
  const GraphShapes& values = shapes.at(&m.graph());
  std::vector<std::string> wrong;
  for (int i = 0; i < g.output_size(); ++i) {
    const onnx::TensorProto& e = expected[static_cast<size_t>(i)];
    InferredValue want;
    want.elem = e.data_type();
    want.shape.emplace();
    for (int64_t d : e.dims()) want.shape->push_back(InferredDim::of(d));
    const auto it = values.find(g.output(i).name());
    const InferredValue got = it == values.end() ? InferredValue{} : it->second;
    if (got.elem != want.elem || got.shape != want.shape)
      wrong.push_back(fmt::format("output '{}': inferred {}, ONNX's data {}", g.output(i).name(), got.text(), want.text()));
  }
  if (wrong.empty()) ++t.matched;
  if (!covered) return;
  ++t.covered;
  const std::string name = dir.filename().string();
  if (!wrong.empty() && !excused(name)) t.problems.push_back(fmt::format("{}: {}", name, fmt::join(wrong, "; ")));
}

Tally run_all(const fs::path& root) {
  std::vector<fs::path> dirs;
  for (const auto& d : fs::directory_iterator(root))
    if (fs::exists(d.path() / "model.onnx")) dirs.push_back(d.path());
  std::sort(dirs.begin(), dirs.end());
  Tally t;
  for (const auto& d : dirs) run_folder(d, t);
  return t;
}

void report(const Tally& t, int at_least) {
  WARN(fmt::format("{} of {} folders matched; {} covered by rules; ops without a rule: {}", t.matched, t.total,
                   t.covered, fmt::join(t.uncovered_ops, " ")));
  for (const auto& p : t.problems) UNSCOPED_INFO(p);
  CHECK(t.problems.empty());
  CHECK(t.matched >= at_least);
}

}  // namespace

TEST_CASE("bnorm's shape inference alone gives ONNX 1.23's node tests their output shapes", "[infer][conformance]") {
  report(run_all(fs::path(BNORM_SOURCE_DIR) / "testdata" / "onnx-node-1.23"), 1690);
}

TEST_CASE("bnorm's shape inference alone gives ONNX 1.12's node tests their output shapes", "[infer][conformance]") {
  const fs::path root = fs::path(ONNX_TESTDATA_DIR) / "node";
  if (!fs::exists(root)) return;
  report(run_all(root), 868);
}

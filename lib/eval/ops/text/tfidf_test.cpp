// TfIdfVectorizer: counts by hand from the specification's own example.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using bnorm::test::GraphBuilder;

void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

void text(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// Pool: 1-grams {94}, 2-grams {94, 12}, {17, 28}; outputs 2, 0, 1.
std::vector<double> run(const std::string& mode, int64_t min_n, int64_t skip, const std::vector<float>& weights,
                        const std::vector<double>& x) {
  GraphBuilder b(9);
  b.input("X", DType::int64, {static_cast<int64_t>(x.size())});
  auto& n = b.node("TfIdfVectorizer", {"X"}, {"Y"}, "tfidf");
  text(n, "mode", mode);
  bnorm::test::set_attr(n, "min_gram_length", min_n);
  bnorm::test::set_attr(n, "max_gram_length", int64_t{2});
  bnorm::test::set_attr(n, "max_skip_count", skip);
  ints(n, "pool_int64s", {94, 94, 12, 17, 28});
  ints(n, "ngram_counts", {0, 1});
  ints(n, "ngram_indexes", {2, 0, 1});
  if (!weights.empty()) {
    auto* a = n.add_attribute();
    a->set_name("weights");
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float w : weights) a->add_floats(w);
  }
  b.output("Y");
  return bnorm::evaluate(b.model(), {{"X", Tensor::from_f64(DType::int64, {static_cast<int64_t>(x.size())}, x)}})
      .at("Y")
      .to_f64();
}

}  // namespace

TEST_CASE("TfIdfVectorizer counts skip-grams as the specification's example does", "[eval][tfidf]") {
  // [94, 17, 36, 12, 28] with skip 2: 2-grams [94, 12] (indexes 0, 3) and [17, 28] (1, 4).
  const std::vector<double> x{94, 17, 36, 12, 28, 94};
  // Only 2-grams, no skip: neither pool 2-gram is adjacent.
  CHECK(run("TF", 2, 0, {}, x) == std::vector<double>{0, 0, 0});
  // Skips up to 2: both 2-grams once; 1-grams not counted (min 2).
  CHECK(run("TF", 2, 2, {}, x) == std::vector<double>{1, 1, 0});
  // 1-grams too: 94 twice, whatever the skip (a skip does not change 1-grams).
  CHECK(run("TF", 1, 2, {}, x) == std::vector<double>{1, 1, 2});
  // IDF: counts above 1 become 1, times the weight; TFIDF: count times weight.
  CHECK(run("IDF", 1, 2, {0.5f, 2.0f, 4.0f}, x) == std::vector<double>{2, 4, 0.5});
  CHECK(run("TFIDF", 1, 2, {0.5f, 2.0f, 4.0f}, x) == std::vector<double>{2, 4, 1});
}

TEST_CASE("TfIdfVectorizer refuses malformed pools and modes", "[eval][tfidf]") {
  const std::vector<double> x{1, 2};
  CHECK_THROWS_AS(run("BM25", 1, 0, {}, x), bnorm::Error);
  CHECK_THROWS_AS(run("TF", 3, 0, {}, x), bnorm::Error);    // min above max
  CHECK_THROWS_AS(run("TF", 1, 0, {1.0f}, x), bnorm::Error);  // weights of the wrong length
}

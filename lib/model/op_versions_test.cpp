// The op version table: resolution of a node's schema version at an opset.
#include <catch2/catch.hpp>

#include "model/op_versions.h"

using bnorm::op_history;
using bnorm::op_version_at;
using bnorm::resolve_op;

TEST_CASE("an op resolves to its newest since-version not above the opset", "[model][versions]") {
  CHECK(op_version_at("ReduceMean", 17) == 13);
  CHECK(op_version_at("ReduceMean", 18) == 18);
  CHECK(op_version_at("ReduceMean", 23) == 18);
  CHECK(op_version_at("ReduceSum", 18) == 13);
  CHECK(op_version_at("Split", 18) == 18);
  CHECK(op_version_at("Pad", 19) == 19);
  CHECK(op_version_at("BatchNormalization", 8) == 7);
  CHECK(op_version_at("BatchNormalization", 23) == 15);
  CHECK(op_version_at("Relu", 1) == 1);
  CHECK(op_version_at("Relu", 0) == 1);  // no opset_import: opset 1
}

TEST_CASE("an op does not exist before its first version, after removal, or past experimental opsets",
          "[model][versions]") {
  const auto layer_norm = resolve_op("LayerNormalization", 16);
  CHECK(layer_norm.known);
  CHECK(layer_norm.version == 0);
  CHECK(layer_norm.why_not == "it was introduced at opset 17");
  const auto upsample = resolve_op("Upsample", 10);
  CHECK(upsample.version == 0);
  CHECK(upsample.why_not == "it was removed at opset 10");
  CHECK(op_version_at("Upsample", 9) == 9);
  CHECK(op_version_at("Scatter", 11) == 0);
  CHECK(op_version_at("ImageScaler", 9) == 1);
  CHECK(op_version_at("ImageScaler", 10) == 0);
  CHECK(op_version_at("ThresholdedRelu", 9) == 1);
  CHECK(op_version_at("ThresholdedRelu", 10) == 10);
  const auto nope = resolve_op("NoSuchOp", 13);
  CHECK_FALSE(nope.known);
}

TEST_CASE("GroupNormalization-18 is marked deprecated but still resolves at 18 to 20", "[model][versions]") {
  const auto g18 = resolve_op("GroupNormalization", 20);
  CHECK(g18.version == 18);
  CHECK(g18.deprecated);
  CHECK(op_version_at("GroupNormalization", 21) == 21);
}

TEST_CASE("the table holds ONNX 1.23's ops with ascending since-versions", "[model][versions]") {
  CHECK(bnorm::newest_known_opset() == 28);
  const auto& all = bnorm::all_op_histories();
  CHECK(all.size() > 200);
  for (size_t i = 0; i < all.size(); ++i) {
    INFO(std::string(all[i].op));
    if (i) CHECK(all[i - 1].op < all[i].op);
    REQUIRE_FALSE(all[i].versions.empty());
    for (size_t k = 1; k < all[i].versions.size(); ++k) CHECK(all[i].versions[k - 1] < all[i].versions[k]);
  }
  REQUIRE(op_history("LSTM"));
  CHECK(op_history("LSTM")->versions == std::vector<int>{1, 7, 14, 22});
  CHECK(bnorm::versions_between("ReduceMax", 13, 23) == std::vector<int>{18, 20});
}

// Every model of ONNX's conformance data (libonnx-testdata) loads and saves
// without any change to its ModelProto, whether its large tensors stay in
// the file while it is loaded (deferred) or not.
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "core/error.h"
#include "model/deferred.h"
#include "model/model.h"
#include "model/tensor_proto.h"
#include "support/cli.h"

namespace fs = std::filesystem;
using namespace bnorm;

namespace {

// Field by field, a NaN equal to a NaN (ONNX's test data holds NaN weights).
bool same_model(const onnx::ModelProto& a, const onnx::ModelProto& b) {
  google::protobuf::util::DefaultFieldComparator nan_equal;
  nan_equal.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer d;
  d.set_field_comparator(&nan_equal);
  return d.Compare(a, b);
}

}  // namespace

TEST_CASE("every conformance model round-trips through load and save unchanged", "[model][roundtrip]") {
  // Loaded as usual, with every raw_data of 1 byte or more deferred (left
  // in the file and streamed into the output), and with nothing deferred.
  const size_t threshold = GENERATE(kDeferThreshold, size_t{1}, size_t{0});
  INFO("defer threshold " << threshold);
  const fs::path root(ONNX_TESTDATA_DIR);
  REQUIRE(fs::is_directory(root));
  test::TempDir tmp;
  int count = 0;
  std::vector<std::string> failures;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".onnx") continue;
    ++count;
    // The reference: protobuf's own parse of the file, independent of bnorm.
    onnx::ModelProto reference;
    const std::string bytes = test::read_file(entry.path());
    if (!reference.ParseFromString(bytes)) {
      failures.push_back(entry.path().string() + ": protobuf itself cannot parse it");
      continue;
    }
    try {
      Model m = load_model(entry.path(), threshold);
      const fs::path out = tmp / "out.onnx";
      save_model(m, out);
      onnx::ModelProto reread;
      REQUIRE(reread.ParseFromString(test::read_file(out)));
      if (!same_model(reference, reread)) {
        failures.push_back(entry.path().string() + ": changed by load + save");
      }
    } catch (const std::exception& e) {
      failures.push_back(entry.path().string() + ": " + e.what());
    }
  }
  INFO("models: " << count);
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  CHECK(count > 1000);
}

// testdata/ holds the generated models and ONNX 1.23's node tests (IR up to
// 13 there, with fields ONNX 1.12's protobuf does not know: kept as unknown
// fields, byte for byte; IR 12's float8e8m0 and IR 13's int2 and uint2
// written back as they were).
TEST_CASE("every generated test model round-trips, every field kept", "[model][roundtrip]") {
  test::TempDir tmp;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(test::testdata(""))) {
    const fs::path& p = entry.path();
    if (p.extension() != ".onnx" || p.parent_path().filename() == "external_bad") continue;
    INFO(p);
    ++count;
    onnx::ModelProto reference;
    REQUIRE(reference.ParseFromString(test::read_file(p)));
    Model m = load_model(p);
    const bool external = m.has_external_data();
    save_model(m, tmp / "out.onnx");
    onnx::ModelProto reread;
    REQUIRE(reread.ParseFromString(test::read_file(tmp / "out.onnx")));
    if (external) {
      // Only the external-data entries change (they point at out.onnx.data).
      CHECK(reread.graph().node_size() == reference.graph().node_size());
      CHECK(fs::exists(tmp / "out.onnx.data"));
    } else {
      CHECK(same_model(reference, reread));
    }
  }
  CHECK(count >= 19);
}

TEST_CASE("deferred tensors decode to the bytes a full load gives, and survive saving over a copy", "[model][roundtrip]") {
  test::TempDir tmp;
  const fs::path in = test::testdata("resnet_block_opset9.onnx");
  const Model full = load_model(in, 0);
  Model lazy = load_model(in, 1);
  REQUIRE(lazy.proto.graph().initializer_size() == full.proto.graph().initializer_size());
  int deferred = 0;
  for (int i = 0; i < full.proto.graph().initializer_size(); ++i) {
    const auto& t = lazy.proto.graph().initializer(i);
    deferred += is_deferred(t);
    CHECK(decode_tensor(t, lazy.dir()).bytes == decode_tensor(full.proto.graph().initializer(i), full.dir()).bytes);
  }
  CHECK(deferred == full.proto.graph().initializer_size());
  // The source stays open: replacing the file on disk changes nothing read.
  const fs::path copy = tmp / "copy.onnx";
  fs::copy_file(in, copy);
  Model from_copy = load_model(copy, 1);
  fs::remove(copy);
  std::ofstream(copy) << "not a model any more";
  save_model(from_copy, tmp / "out.onnx");
  onnx::ModelProto reread;
  REQUIRE(reread.ParseFromString(test::read_file(tmp / "out.onnx")));
  CHECK(google::protobuf::util::MessageDifferencer::Equals(full.proto, reread));
}

TEST_CASE("a model carrying bnorm's own deferred-data key is refused", "[model]") {
  test::TempDir tmp;
  Model m = load_model(test::testdata("demo_opset6.onnx"), 0);
  auto* t = m.proto.mutable_graph()->mutable_initializer(0);
  t->clear_raw_data();
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  for (const char* k : {"location", kDeferredKey, "offset", "length"}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(k == std::string("location") ? "x" : "0");
  }
  const fs::path bad = tmp / "bad.onnx";
  std::ofstream(bad, std::ios::binary) << m.proto.SerializeAsString();
  for (size_t threshold : {kDeferThreshold, size_t{0}}) {
    try {
      load_model(bad, threshold);
      FAIL("loaded");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("reserved") != std::string::npos);
    }
  }
}

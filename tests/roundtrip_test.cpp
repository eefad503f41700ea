// Every model of ONNX's conformance data (libonnx-testdata) loads and saves
// without any change to its ModelProto.
#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>

#include "model/model.h"
#include "support.h"

namespace fs = std::filesystem;
using namespace bnorm;

TEST_CASE("every conformance model round-trips through load and save unchanged", "[model][roundtrip]") {
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
      Model m = load_model(entry.path());
      const fs::path out = tmp / "out.onnx";
      save_model(m, out);
      onnx::ModelProto reread;
      REQUIRE(reread.ParseFromString(test::read_file(out)));
      if (!google::protobuf::util::MessageDifferencer::Equals(reference, reread)) {
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
      CHECK(google::protobuf::util::MessageDifferencer::Equals(reference, reread));
    }
  }
  CHECK(count >= 19);
}

#include "model/model.h"

#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "core/error.h"
#include "model/external_data.h"
#include "model/tensor_proto.h"
#include "support/cli.h"

namespace fs = std::filesystem;
using namespace bnorm;
using google::protobuf::util::MessageDifferencer;

namespace {

// Identity model with one float initializer 'w' of `n` elements 0, 1, 2, ...
onnx::ModelProto small_model(int n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* node = g->add_node();
  node->set_op_type("Identity");
  node->add_input("w");
  node->add_output("y");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(n);
  for (int i = 0; i < n; ++i) w->add_float_data(static_cast<float>(i));
  g->add_output()->set_name("y");
  return m;
}

void save_raw(const onnx::ModelProto& m, const fs::path& p) {
  std::ofstream out(p, std::ios::binary);
  REQUIRE(m.SerializeToOstream(&out));
}

void make_external(onnx::TensorProto& t, const std::string& location, int64_t offset, int64_t length) {
  t.clear_float_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

std::string load_error(const fs::path& p) {
  try {
    load_model(p);
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitBadInput);
    return e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("unreadable inputs are errors that name the file", "[model][io]") {
  test::TempDir tmp;
  CHECK(load_error(tmp / "missing.onnx") == (tmp / "missing.onnx").string() + ": no such file");
  CHECK(load_error(tmp.path()).find("is a directory") != std::string::npos);
  test::write_file(tmp / "empty.onnx", "");
  CHECK(load_error(tmp / "empty.onnx").find("is empty") != std::string::npos);
  test::write_file(tmp / "junk.onnx", std::string("\xff\xff\xff\xff\x0f garbage", 14));
  CHECK(load_error(tmp / "junk.onnx").find("not an ONNX model") != std::string::npos);

  std::string bytes;
  REQUIRE(small_model(64).SerializeToString(&bytes));
  test::write_file(tmp / "truncated.onnx", bytes.substr(0, bytes.size() / 2));
  CHECK(load_error(tmp / "truncated.onnx").find("not an ONNX model") != std::string::npos);

  // A TensorProto parses as a ModelProto with unknown fields and no graph.
  onnx::TensorProto t;
  t.add_dims(3);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.set_raw_data(std::string(12, '\0'));
  REQUIRE(t.SerializeToString(&bytes));
  test::write_file(tmp / "tensor.pb", bytes);
  CHECK(load_error(tmp / "tensor.pb").find("no graph") != std::string::npos);
}

TEST_CASE("a model without opset_import means opset 1", "[model]") {
  auto m = small_model(1);
  m.clear_opset_import();
  m.set_ir_version(1);
  CHECK(default_opset(m) == 1);
  m.add_opset_import()->set_version(9);
  CHECK(default_opset(m) == 9);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(3);
  CHECK(default_opset(m) == 9);
  m.add_opset_import()->set_domain("ai.onnx");
  CHECK_THROWS_AS(default_opset(m), Error);
}

TEST_CASE("save writes the same ModelProto and replaces the target atomically", "[model][io]") {
  test::TempDir tmp;
  const auto original = small_model(10);
  save_raw(original, tmp / "in.onnx");
  Model m = load_model(tmp / "in.onnx");
  save_model(m, tmp / "out.onnx");
  onnx::ModelProto reread;
  REQUIRE(reread.ParseFromString(test::read_file(tmp / "out.onnx")));
  CHECK(MessageDifferencer::Equals(original, reread));
  CHECK(m.path == tmp / "out.onnx");
  // Only the two files: no temporaries left.
  CHECK(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()) == 2);
}

TEST_CASE("saving into a missing directory fails and leaves nothing", "[model][io]") {
  test::TempDir tmp;
  save_raw(small_model(4), tmp / "in.onnx");
  Model m = load_model(tmp / "in.onnx");
  try {
    save_model(m, tmp / "nope" / "out.onnx");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.message().find("does not exist") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(tmp / "nope"));
}

TEST_CASE("external data is read from the side file and written next to the output", "[model][external]") {
  test::TempDir tmp;
  auto proto = small_model(8);
  // The side file holds 16 junk bytes, then the 8 floats.
  std::string side(16, 'x');
  for (int i = 0; i < 8; ++i) {
    const float f = static_cast<float>(i);
    side.append(reinterpret_cast<const char*>(&f), 4);
  }
  test::write_file(tmp / "w.bin", side);
  make_external(*proto.mutable_graph()->mutable_initializer(0), "w.bin", 16, 32);
  save_raw(proto, tmp / "in.onnx");

  Model m = load_model(tmp / "in.onnx");
  CHECK(m.has_external_data());
  const Tensor w = decode_tensor(m.proto.graph().initializer(0), m.dir());
  CHECK(w.to_f64() == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});

  fs::create_directories(tmp / "out");
  SaveOptions options;
  options.external_threshold = 0;
  save_model(m, tmp / "out" / "model.onnx", options);
  CHECK(fs::exists(tmp / "out" / "model.onnx.data"));
  Model again = load_model(tmp / "out" / "model.onnx");
  const auto& t = again.proto.graph().initializer(0);
  CHECK(is_external(t));
  CHECK(decode_tensor(t, again.dir()).to_f64() == w.to_f64());
  // The input is untouched.
  CHECK(test::read_file(tmp / "w.bin") == side);

  options.external_data_name = "weights.bin";
  save_model(again, tmp / "out" / "named.onnx", options);
  CHECK(fs::exists(tmp / "out" / "weights.bin"));
}

TEST_CASE("external data that points outside the model's directory is refused", "[model][external]") {
  test::TempDir tmp;
  fs::create_directories(tmp / "m");
  test::write_file(tmp / "outside.bin", std::string(32, '\0'));
  fs::create_symlink(tmp / "outside.bin", tmp / "m" / "link.bin");
  struct Case {
    std::string location;
    std::string expect;
  };
  const Case cases[] = {
      {"/etc/hostname", "absolute"},
      {"../outside.bin", "leaves the model's directory"},
      {"sub/../../outside.bin", "leaves the model's directory"},
      {"link.bin", "resolves outside"},
      {"nope.bin", "does not exist"},
  };
  for (const auto& c : cases) {
    auto proto = small_model(8);
    make_external(*proto.mutable_graph()->mutable_initializer(0), c.location, 0, 32);
    save_raw(proto, tmp / "m" / "model.onnx");
    INFO(c.location);
    // Refused when loading, before any command sees the model ...
    CHECK(load_error(tmp / "m" / "model.onnx").find(c.expect) != std::string::npos);
    // ... and by the decoder itself.
    CHECK_THROWS_WITH(decode_tensor(proto.graph().initializer(0), tmp / "m"), Catch::Contains(c.expect));
    // Saving reads the external tensors too: same refusal, nothing written.
    Model m;
    m.proto = proto;
    m.path = tmp / "m" / "model.onnx";
    CHECK_THROWS_AS(save_model(m, tmp / "out.onnx"), Error);
    CHECK_FALSE(fs::exists(tmp / "out.onnx"));
    CHECK_FALSE(fs::exists(tmp / "out.onnx.data"));
  }
}

TEST_CASE("external data past the end of its file, or of the wrong size, is refused", "[model][external]") {
  test::TempDir tmp;
  test::write_file(tmp / "short.bin", std::string(20, '\0'));
  auto proto = small_model(8);
  make_external(*proto.mutable_graph()->mutable_initializer(0), "short.bin", 0, 32);
  save_raw(proto, tmp / "a.onnx");
  CHECK(load_error(tmp / "a.onnx").find("past the end") != std::string::npos);
  CHECK_THROWS_WITH(decode_tensor(proto.graph().initializer(0), tmp.path()), Catch::Contains("past the end"));

  proto = small_model(8);
  make_external(*proto.mutable_graph()->mutable_initializer(0), "short.bin", 0, 16);
  save_raw(proto, tmp / "b.onnx");
  CHECK(load_error(tmp / "b.onnx").find("need 32") != std::string::npos);
  CHECK_THROWS_WITH(decode_tensor(proto.graph().initializer(0), tmp.path()), Catch::Contains("need 32"));
}

TEST_CASE("the side-file name of a save must stay inside the output directory", "[model][external]") {
  test::TempDir tmp;
  test::write_file(tmp / "w.bin", std::string(32, '\0'));
  auto proto = small_model(8);
  make_external(*proto.mutable_graph()->mutable_initializer(0), "w.bin", 0, 32);
  save_raw(proto, tmp / "in.onnx");
  Model m = load_model(tmp / "in.onnx");
  SaveOptions options;
  options.external_data_name = "../escape.bin";
  CHECK_THROWS_AS(save_model(m, tmp / "out.onnx", options), Error);
  CHECK_FALSE(fs::exists(tmp / "out.onnx"));
  CHECK(m.path == tmp / "in.onnx");
}

TEST_CASE("an int4 initializer in int32_data moves to external data packed, two to a byte", "[model][external]") {
  // Found in review: the save wrote the unpacked bytes a Tensor holds.
  test::TempDir tmp;
  auto proto = small_model(8);
  test::write_file(tmp / "w.bin", std::string(32, '\0'));
  make_external(*proto.mutable_graph()->mutable_initializer(0), "w.bin", 0, 32);
  const std::vector<double> values{-8, 7, 0, -1, 3};
  onnx::TensorProto packed = to_proto(Tensor::from_f64(DType::int4, {5}, values));
  onnx::TensorProto* q = proto.mutable_graph()->add_initializer();
  q->set_name("q");
  q->set_data_type(packed.data_type());
  q->add_dims(5);
  for (unsigned char b : packed.raw_data()) q->add_int32_data(b);  // one packed byte per int32
  save_raw(proto, tmp / "in.onnx");
  Model m = load_model(tmp / "in.onnx");
  REQUIRE(decode_tensor(m.proto.graph().initializer(1), m.dir()).to_f64() == values);
  SaveOptions options;
  options.external_threshold = 0;
  save_model(m, tmp / "out.onnx", options);
  Model again = load_model(tmp / "out.onnx");
  const auto& t = again.proto.graph().initializer(1);
  CHECK(is_external(t));
  CHECK(external_ref(t).length == 3);
  CHECK(decode_tensor(t, again.dir()).to_f64() == values);
}

TEST_CASE("set_default_opset sets the import in place, or adds one with the domain written", "[model]") {
  onnx::ModelProto none;
  set_default_opset(none, 17);
  REQUIRE(none.opset_import_size() == 1);
  // The domain field is present ("" written), as onnx.helper.make_opsetid writes it: the upgrade pass above
  // opset 17 used to add the import without it (a second copy of this function, now gone).
  CHECK(none.opset_import(0).has_domain());
  CHECK(none.opset_import(0).domain().empty());
  CHECK(none.opset_import(0).version() == 17);
  CHECK(default_opset(none) == 17);
  onnx::ModelProto spelled;
  auto* ml = spelled.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  auto* onnx_domain = spelled.add_opset_import();
  onnx_domain->set_domain("ai.onnx");
  onnx_domain->set_version(9);
  set_default_opset(spelled, 21);
  REQUIRE(spelled.opset_import_size() == 2);
  CHECK(spelled.opset_import(0).version() == 3);
  CHECK(spelled.opset_import(1).domain() == "ai.onnx");
  CHECK(spelled.opset_import(1).version() == 21);
}

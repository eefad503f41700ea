#include "core/error.h"

#include <catch2/catch.hpp>

using namespace bnorm;

TEST_CASE("an error names the file, the node with op and version, and the problem", "[error]") {
  Error e(ErrorKind::input, "input 'scale' has shape [4], expected [3]");
  e.at_node("bn3", "BatchNormalization", 9).in_file("model.onnx");
  CHECK(e.message() == "model.onnx: node 'bn3' (BatchNormalization-9): input 'scale' has shape [4], expected [3]");
  CHECK(std::string(e.what()) == e.message());
}

TEST_CASE("the innermost file and node win, contexts are appended", "[error]") {
  Error e(ErrorKind::unsupported, "bad");
  e.at_node("a", "Conv").at_node("b", "Relu").in_file("x.onnx").in_file("y.onnx").context("while folding");
  CHECK(e.message() == "x.onnx: node 'a' (Conv): bad (while folding)");
}

TEST_CASE("exit codes: numeric checks 1, everything else 2", "[error]") {
  CHECK(Error(ErrorKind::check_failed, "x").exit_code() == 1);
  CHECK(Error(ErrorKind::usage, "x").exit_code() == 2);
  CHECK(Error(ErrorKind::input, "x").exit_code() == 2);
  CHECK(Error(ErrorKind::unsupported, "x").exit_code() == 2);
}

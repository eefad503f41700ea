// The fuzz targets' bodies (fuzz/targets.cpp) in the ordinary test suite:
// every input the fuzzer once failed on (tests/fuzz_regressions/TARGET/)
// and every seed must now be processed or refused with a bnorm::Error,
// nothing else. Under `make test-sanitize` the same runs are checked by
// AddressSanitizer and UndefinedBehaviorSanitizer. docs/reliability.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli.h"
#include "targets.h"

namespace fs = std::filesystem;
using bnorm::test::read_file;

namespace {

std::vector<fs::path> files_in(const fs::path& dir, const std::vector<std::string>& extensions, bool recursive) {
  std::vector<fs::path> out;
  auto take = [&](const fs::directory_entry& e) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (extensions.empty() || std::count(extensions.begin(), extensions.end(), ext))) {
      out.push_back(e.path());
    }
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) take(e);
  } else {
    for (const auto& e : fs::directory_iterator(dir)) take(e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The seeds fuzz/run.sh gives each target.
std::vector<fs::path> seeds(const bnorm::fuzz::Target& t) {
  if (std::string(t.seeds) == "tensors") return files_in(bnorm::test::testdata("tensors"), {".pb", ".npy"}, false);
  return files_in(bnorm::test::testdata(""), {".onnx"}, true);
}

}  // namespace

TEST_CASE("fuzz regression inputs are processed or refused with a bnorm::Error") {
  const fs::path root = fs::path(BNORM_SOURCE_DIR) / "tests" / "fuzz_regressions";
  int replayed = 0;
  REQUIRE(files_in(root, {}, false).empty());  // no loose files: one folder per target
  for (const auto& entry : fs::directory_iterator(root)) {
    REQUIRE(entry.is_directory());
    const auto& target = bnorm::fuzz::target(entry.path().filename().string());  // throws for an unknown name
    for (const auto& input : files_in(entry.path(), {}, false)) {
      INFO(input.string());
      CHECK_NOTHROW(bnorm::fuzz::run(target, read_file(input)));
      ++replayed;
    }
  }
  CHECK(replayed > 0);
}

TEST_CASE("every fuzz target runs its seeds, and takes at least one to the end") {
  for (const auto& target : bnorm::fuzz::targets()) {
    const auto files = seeds(target);
    REQUIRE(!files.empty());
    int accepted = 0;
    for (const auto& input : files) {
      INFO(target.name << " on " << input.string());
      bool ok = false;
      CHECK_NOTHROW(ok = bnorm::fuzz::run(target, read_file(input)));
      accepted += ok;
    }
    INFO(target.name);
    CHECK(accepted > 0);
  }
}

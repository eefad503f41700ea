// The fuzz targets' bodies, shared by the libFuzzer executables (fuzz/,
// clang with BNORM_FUZZ=ON) and by the test suite, which replays the
// regression inputs under tests/fuzz_regressions/ and the seed corpora
// through them in every build (tests/fuzz_regression_test.cpp).
//
// Each body runs one command's pipeline on arbitrary bytes. A bnorm::Error
// is an expected outcome and is swallowed; anything else that escapes (any
// other exception), a crash, a sanitizer report, a timeout or running out
// of memory is a finding. docs/reliability.md has the list and the limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bnorm::fuzz {

// The tensor byte limit while a body runs (max_tensor_bytes(), 64 MiB):
// small enough that one input cannot take libFuzzer's 2 GiB RSS budget.
inline constexpr int64_t kTensorByteLimit = int64_t{64} << 20;

struct Target {
  const char* name;        // "model": the executable is fuzz_model
  const char* seeds;       // "models" (testdata/**/*.onnx) or "tensors" (testdata/tensors)
  void (*body)(const std::string& bytes);
};

// Every target, in the order `make fuzz` runs them.
const std::vector<Target>& targets();
const Target& target(const std::string& name);

// Runs `t` on `bytes` the way the fuzzer does: quiet logging, the tensor
// byte limit, bnorm::Error swallowed. Returns true when the pipeline ran
// to its end, false when it was refused with a bnorm::Error. Anything else
// propagates.
bool run(const Target& t, const std::string& bytes);

}  // namespace bnorm::fuzz

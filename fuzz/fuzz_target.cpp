// One libFuzzer executable per target: fuzz/CMakeLists.txt compiles this
// file with BNORM_FUZZ_TARGET set to the target's name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bnorm::fuzz::Target& t = bnorm::fuzz::target(BNORM_FUZZ_TARGET);
  (void)bnorm::fuzz::run(t, std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}

// gather.h at every SIMD level: every stride from 1 to 4 and every length
// across the vector tails, against the definition dst[j] = src[j * stride]
// (bits: NaNs and negative zeros copied as they are), the rest of dst left
// alone, and nothing read past the last element: the source ends at a page
// the process may not read.
#include "kernels/gather.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

TEST_CASE("gather_row copies every stride-th element, and nothing past the last, at every level", "[kernels]") {
  testing::SettingsGuard guard;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Two pages, the second unreadable: sources end right before it.
  void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  auto* base = static_cast<float*>(map);
  const size_t count = page / sizeof(float);
  for (size_t i = 0; i < count; ++i) base[i] = static_cast<float>(i) - 100.5f;
  base[count - 1] = std::numeric_limits<float>::quiet_NaN();
  base[count - 3] = -0.0f;
  REQUIRE(::mprotect(static_cast<char*>(map) + page, page, PROT_NONE) == 0);
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    for (size_t stride = 1; stride <= 4; ++stride)
      for (size_t n = 0; n <= 70; ++n) {
        INFO(isa_name(isa) << " stride " << stride << " n " << n);
        // The last element read is the last of the readable page.
        const float* src = n ? base + count - 1 - (n - 1) * stride : base + count;
        std::vector<float> got(n + 3, 7.0f);
        gather_row(src, stride, n, got.data());
        for (size_t j = 0; j < n; ++j) REQUIRE(std::memcmp(&got[j], &src[j * stride], sizeof(float)) == 0);
        for (size_t j = n; j < n + 3; ++j) REQUIRE(got[j] == 7.0f);
      }
  }
  ::munmap(map, 2 * page);
}

}  // namespace
}  // namespace bnorm::kernels

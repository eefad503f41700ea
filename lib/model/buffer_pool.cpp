// The pool of buffer_pool.h.
#include "model/buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace bnorm {
namespace {
thread_local BufferPool* tl_pool = nullptr;

// New storage of n bytes, zeroed. Past 4 MiB, the 2 MiB-aligned part of it
// is marked for transparent huge pages before anything touches it (where
// the kernel offers them on request: /sys/kernel/mm/transparent_hugepage),
// so that first touches fault once per 2 MiB instead of once per 4 KiB.
std::vector<uint8_t> fresh(size_t n) {
  std::vector<uint8_t> b;
  b.reserve(n);
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (n >= 2 * kHuge) {
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(b.data()) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(b.data()) + n) & ~(kHuge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
  b.resize(n);
  return b;
}
}  // namespace

std::vector<uint8_t> BufferPool::reuse(size_t n) {
  auto it = free_.lower_bound(n);
  if (n < kMinBytes || it == free_.end() || it->first > 2 * n + kMinBytes) return {};
  std::vector<uint8_t> b = std::move(it->second);
  held_ -= b.capacity();
  free_.erase(it);
  ++reused_;
  b.resize(n);  // no larger than its size: nothing allocated, nothing filled
  return b;
}

std::vector<uint8_t> BufferPool::take(size_t n) {
  std::vector<uint8_t> b = reuse(n);
  if (b.capacity() == 0) return fresh(n);
  std::fill(b.begin(), b.end(), uint8_t{0});
  return b;
}

std::vector<uint8_t> BufferPool::take_for_overwrite(size_t n) {
  std::vector<uint8_t> b = reuse(n);
  return b.capacity() == 0 ? fresh(n) : std::move(b);
}

void BufferPool::give(std::vector<uint8_t>&& b) {
  // Held by size, not capacity: a vector grows past its size only by
  // filling the new bytes, work a buffer about to be overwritten must not cost.
  const size_t cap = b.capacity();
  if (b.size() < kMinBytes || held_ + cap > kMaxHeld) return;
  held_ += cap;
  free_.emplace(b.size(), std::move(b));
}

BufferPool* current_buffer_pool() noexcept { return tl_pool; }

std::vector<uint8_t> storage_for_overwrite(size_t n) {
  return tl_pool ? tl_pool->take_for_overwrite(n) : std::vector<uint8_t>(n);
}

Tensor tensor_for_overwrite(DType t, std::vector<int64_t> dims) {
  if (!tl_pool) return Tensor(t, std::move(dims));
  Tensor out;
  out.dtype = t;
  out.dims = std::move(dims);
  const size_t size = dtype_size(t);
  if (size == 0) return Tensor(t, out.dims);  // the constructor's error
  const int64_t n = checked_buffer_numel(out.dims, size, "a tensor of " + dtype_name(t));
  out.bytes = tl_pool->take_for_overwrite(static_cast<size_t>(n) * size);
  return out;
}

Tensor pooled_copy(const Tensor& x) {
  if (!tl_pool) return x;
  Tensor out;
  out.name = x.name;
  out.dtype = x.dtype;
  out.dims = x.dims;
  out.bytes = tl_pool->take_for_overwrite(x.bytes.size());
  std::copy(x.bytes.begin(), x.bytes.end(), out.bytes.begin());
  return out;
}

BufferPoolScope::BufferPoolScope() {
  if (!tl_pool) {
    tl_pool = &own_;
    installed_ = true;
  }
}

BufferPoolScope::BufferPoolScope(BufferPool& pool) {
  if (!tl_pool) {
    tl_pool = &pool;
    installed_ = true;
  }
}

BufferPoolScope::~BufferPoolScope() {
  if (installed_) tl_pool = nullptr;
}

}  // namespace bnorm

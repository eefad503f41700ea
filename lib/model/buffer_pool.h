// Storage of freed tensors, kept for the next tensor of about its size: the
// evaluator's memory planning. Without it, each node's output of more than
// glibc's mmap threshold is a fresh mapping that the kernel zero-fills page
// by page on first touch and unmaps when the value dies; ResNet-18 took
// 7,500 page faults a run that way (docs/performance.md).
//
// A BufferPoolScope installs a pool on the calling thread while it lives
// (nested scopes share the outer pool). While one is installed,
// Tensor(dtype, dims) and the decoding of initializers take their storage
// from the pool when a held buffer fits (size from n to 2n + 64 KiB,
// the smallest such), and the evaluator gives each value's storage back
// after its last use. Buffers under 64 KiB are left to malloc, which
// recycles them itself. The pool holds at most 256 MiB (the memory a run
// may keep beyond its live values); a buffer past that
// is freed. Tensor's storage is handed out zeroed, as its constructor
// promises, so results never depend on what was in a buffer before;
// storage about to be overwritten whole (a tensor's data read from a file)
// is not zeroed first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "model/tensor.h"

namespace bnorm {

class BufferPool {
 public:
  static constexpr size_t kMinBytes = size_t{64} << 10;
  static constexpr size_t kMaxHeld = size_t{256} << 20;

  // `n` zero bytes; recycled storage when a held buffer fits.
  std::vector<uint8_t> take(size_t n);
  // `n` bytes of unspecified value, for the caller to overwrite whole.
  std::vector<uint8_t> take_for_overwrite(size_t n);
  // Keeps `b`'s storage for a later take() (or frees it: small, or the pool full).
  void give(std::vector<uint8_t>&& b);

  size_t held_bytes() const { return held_; }
  size_t reused() const { return reused_; }

 private:
  std::multimap<size_t, std::vector<uint8_t>> free_;  // by size
  // The smallest held buffer of size n to 2n + kMinBytes, resized (down) to n
  // (its old bytes kept where they fit); empty when none.
  std::vector<uint8_t> reuse(size_t n);
  size_t held_ = 0, reused_ = 0;
};

// The pool installed on this thread, or nullptr.
BufferPool* current_buffer_pool() noexcept;

// `n` bytes to overwrite whole: from this thread's pool when one is
// installed, else a new vector.
std::vector<uint8_t> storage_for_overwrite(size_t n);

// A tensor of `t` and `dims` (checked as Tensor's constructor checks them)
// whose elements are unspecified: for an op that writes every element.
// Storage recycled from the pool is then not zeroed first.
Tensor tensor_for_overwrite(DType t, std::vector<int64_t> dims);

// A copy of `x` (name included) whose storage comes from the pool when one
// is installed.
Tensor pooled_copy(const Tensor& x);

// Scratch storage of `n` bytes (of unspecified value) for one op's work,
// from this thread's pool when one is installed, and given back to it
// when the scratch goes: an im2col buffer reused from one Conv to the next
// instead of mapped and zero-filled by the kernel for each.
class PooledScratch {
 public:
  explicit PooledScratch(size_t n) : bytes_(storage_for_overwrite(n)) {}
  ~PooledScratch() {
    if (BufferPool* pool = current_buffer_pool()) pool->give(std::move(bytes_));
  }
  PooledScratch(const PooledScratch&) = delete;
  PooledScratch& operator=(const PooledScratch&) = delete;
  template <class T>
  T* as() noexcept {
    return reinterpret_cast<T*>(bytes_.data());
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Installs a pool on this thread while it lives, unless one is installed
// already: its own, or `pool`, which the caller keeps from one run to the
// next (EvalCache).
class BufferPoolScope {
 public:
  BufferPoolScope();
  explicit BufferPoolScope(BufferPool& pool);
  ~BufferPoolScope();
  BufferPoolScope(const BufferPoolScope&) = delete;
  BufferPoolScope& operator=(const BufferPoolScope&) = delete;

 private:
  BufferPool own_;
  bool installed_ = false;
};

}  // namespace bnorm

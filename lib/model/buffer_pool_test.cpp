// buffer_pool.h: storage comes back zeroed (or whole, for overwrite), is
// reused only when it fits, and scopes nest.
#include "model/buffer_pool.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "model/tensor.h"

namespace bnorm {
namespace {

TEST_CASE("A buffer given back serves the next take of about its size zeroed", "[model][pool]") {
  BufferPool pool;
  const size_t n = size_t{1} << 20;
  std::vector<uint8_t> a = pool.take(n);
  REQUIRE(a.size() == n);
  std::fill(a.begin(), a.end(), uint8_t{0xAB});
  const uint8_t* storage = a.data();
  pool.give(std::move(a));
  REQUIRE(pool.held_bytes() >= n);
  std::vector<uint8_t> b = pool.take(n - 1000);
  REQUIRE(b.data() == storage);
  REQUIRE(b.size() == n - 1000);
  REQUIRE(std::all_of(b.begin(), b.end(), [](uint8_t v) { return v == 0; }));
  REQUIRE(pool.reused() == 1);
  REQUIRE(pool.held_bytes() == 0);
  // For overwrite: the same storage, contents unspecified, sized as asked,
  // when the buffer's size holds it (growing a vector within its capacity
  // would fill the new bytes).
  pool.give(std::move(b));
  const std::vector<uint8_t> bigger = pool.take_for_overwrite(n);
  REQUIRE(bigger.data() != storage);
  REQUIRE(pool.reused() == 1);
  const std::vector<uint8_t> c = pool.take_for_overwrite(n - 2000);
  REQUIRE(c.data() == storage);
  REQUIRE(c.size() == n - 2000);
  REQUIRE(pool.reused() == 2);
}

TEST_CASE("The pool reuses no buffer more than twice the size asked nor keeps small ones", "[model][pool]") {
  BufferPool pool;
  std::vector<uint8_t> big(size_t{8} << 20);
  pool.give(std::move(big));
  const std::vector<uint8_t> small = pool.take(size_t{1} << 20);
  REQUIRE(pool.reused() == 0);  // 8 MiB for 1 MiB: left held, a new buffer made
  REQUIRE(pool.held_bytes() == size_t{8} << 20);
  pool.give(std::vector<uint8_t>(1000));
  REQUIRE(pool.held_bytes() == size_t{8} << 20);
  const std::vector<uint8_t> tiny = pool.take(1000);
  REQUIRE(tiny.size() == 1000);
  REQUIRE(pool.reused() == 0);
}

TEST_CASE("Tensors take zeroed storage from the pool a scope installs and scopes nest", "[model][pool]") {
  REQUIRE(current_buffer_pool() == nullptr);
  {
    const BufferPoolScope outer;
    BufferPool* pool = current_buffer_pool();
    REQUIRE(pool != nullptr);
    {
      const BufferPoolScope inner;
      REQUIRE(current_buffer_pool() == pool);
    }
    REQUIRE(current_buffer_pool() == pool);
    Tensor t(DType::float32, {256, 1024});
    std::fill(t.bytes.begin(), t.bytes.end(), uint8_t{0xFF});
    const uint8_t* storage = t.bytes.data();
    pool->give(std::move(t.bytes));
    const Tensor u(DType::int32, {256, 1000});
    REQUIRE(u.bytes.data() == storage);
    REQUIRE(std::all_of(u.bytes.begin(), u.bytes.end(), [](uint8_t v) { return v == 0; }));
    REQUIRE(storage_for_overwrite(size_t{1} << 20).size() == size_t{1} << 20);
  }
  REQUIRE(current_buffer_pool() == nullptr);
}

}  // namespace
}  // namespace bnorm

namespace bnorm {
namespace {

TEST_CASE("A tensor for overwrite has its type and shape and takes pooled storage unzeroed", "[model][pool]") {
  const Tensor plain = tensor_for_overwrite(DType::float32, {2, 3});  // no pool: an ordinary zeroed tensor
  REQUIRE(plain.bytes == std::vector<uint8_t>(24, 0));
  const BufferPoolScope scope;
  std::vector<uint8_t> old(size_t{1} << 20, 0x5A);
  const uint8_t* storage = old.data();
  current_buffer_pool()->give(std::move(old));
  const Tensor t = tensor_for_overwrite(DType::float64, {512, 256});
  REQUIRE(t.dtype == DType::float64);
  REQUIRE(t.dims == std::vector<int64_t>{512, 256});
  REQUIRE(t.bytes.size() == size_t{1} << 20);
  REQUIRE(t.bytes.data() == storage);
  REQUIRE_THROWS(tensor_for_overwrite(DType::float32, {-1, 2}));
  REQUIRE_THROWS(tensor_for_overwrite(DType::string, {2}));
}

}  // namespace
}  // namespace bnorm

namespace bnorm {
namespace {

TEST_CASE("A pooled copy equals its original and takes pooled storage", "[model][pool]") {
  Tensor x = Tensor::from_f64(DType::float32, {2, 2}, {1, 2, 3, 4});
  x.name = "x";
  const Tensor plain = pooled_copy(x);
  REQUIRE((plain.name == "x" && plain.dims == x.dims && plain.bytes == x.bytes));
  const BufferPoolScope scope;
  Tensor big(DType::float32, {512, 512});
  big.data<float>()[7] = 3.5f;
  std::vector<uint8_t> old(big.bytes.size(), 0x77);
  const uint8_t* storage = old.data();
  current_buffer_pool()->give(std::move(old));
  const Tensor copy = pooled_copy(big);
  REQUIRE(copy.bytes.data() == storage);
  REQUIRE(copy.bytes == big.bytes);
  REQUIRE(copy.dims == big.dims);
}

}  // namespace
}  // namespace bnorm

namespace bnorm {
namespace {

TEST_CASE("The pool keeps at most kMaxHeld bytes and frees what would pass it", "[model][pool]") {
  BufferPool pool;
  const size_t big = BufferPool::kMaxHeld / 2 + (size_t{1} << 20);
  pool.give(std::vector<uint8_t>(big));
  REQUIRE(pool.held_bytes() == big);
  pool.give(std::vector<uint8_t>(big));  // would pass the cap: freed
  REQUIRE(pool.held_bytes() == big);
}

}  // namespace
}  // namespace bnorm

// The implementation table: every row covers real versions of its op, rows
// never overlap, and a node resolves only to the row covering its version.
#include <catch2/catch.hpp>

#include "eval/run/op.h"
#include "model/op_versions.h"

using bnorm::eval::find_op;
using bnorm::eval::op_impls;

TEST_CASE("every implementation row spans since-versions of its op, without overlap", "[eval][versions]") {
  const auto& rows = op_impls();
  REQUIRE_FALSE(rows.empty());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    INFO(r.op << " " << r.first << ".." << r.last);
    const bnorm::OpHistory* h = bnorm::op_history(r.op);
    REQUIRE(h);
    CHECK(std::count(h->versions.begin(), h->versions.end(), r.first) == 1);
    CHECK(std::count(h->versions.begin(), h->versions.end(), r.last) == 1);
    CHECK(r.first <= r.last);
    CHECK(r.fn != nullptr);
    if (i && rows[i - 1].op == r.op) CHECK(rows[i - 1].last < r.first);
  }
}

TEST_CASE("a version outside every row of its op finds no implementation", "[eval][versions]") {
  CHECK(find_op("ReduceMean", 18) != nullptr);
  CHECK(find_op("ReduceSum", 13) != nullptr);
  CHECK(find_op("Relu", 14) != nullptr);
  CHECK(find_op("LinearAttention", 27) != nullptr);
  CHECK(find_op("CausalConvWithState", 27) != nullptr);
  // Versions the table knows but no row covers are refused, not run as a neighbour.
  CHECK(find_op("Attention", 22) == nullptr);  // below the first row
  CHECK(find_op("NoSuchOp", 1) == nullptr);
}

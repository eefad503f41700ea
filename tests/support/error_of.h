// error_of(f): runs `f` and returns the bnorm::Error it throws; the test
// fails when it throws none.
#pragma once

#include <catch2/catch.hpp>

#include "core/error.h"

namespace bnorm::test {

template <typename F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected a bnorm::Error, none was thrown");
  throw;  // unreachable: FAIL throws
}

}  // namespace bnorm::test

// bnorm::Error (its definition is the public include/bnorm/error.h) and the
// library's shorthand for throwing it.
//
// Every failure a user can cause (bad usage, a model that cannot be read,
// an unsupported case) or a numeric check that fails is an Error carrying
// what went wrong and where: the file, the node (name, op and version) and
// a chain of "while ..." contexts added as it travels up. `main` catches it
// once, prints message() and exits with exit_code(). The library never
// calls exit() and never aborts.
#pragma once

#include <fmt/format.h>

#include <bnorm/error.h>

namespace bnorm {

// Throws Error(kind, fmt::format(...)).
template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(kind, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace bnorm

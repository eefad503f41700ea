// What moving one BatchNormalization or InstanceNormalization node to
// another opset would do, for `bnorm inspect`: one line per effect of the
// steps it crosses (the table of schema changes, versions.h, names them;
// steps/bn_<from>_<to>.cpp, in_1_6.cpp convert).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/norm_op.h"

namespace bnorm {

// What converting `n` to the schema in force at `target_opset` does, one
// line per effect ("drop consumed_inputs", ...). Empty: nothing changes.
std::vector<std::string> plan_upgrade(const NormNode& n, int64_t target_opset);

}  // namespace bnorm

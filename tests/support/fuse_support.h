// What the --fuse-norms tests share (tests/upgrade_fuse_*_test.cpp): a
// model's IR and graph name set, the model upgraded with --fuse-norms (and
// checked), and what its report says about a fusion or a near miss.
#pragma once

#include <string>

#include "support/upgrade_support.h"

namespace bnorm::test {

inline Model with_ir(Model m, int64_t ir) {
  m.proto.set_ir_version(ir);
  m.proto.mutable_graph()->set_name("g");
  return m;
}

// `in` upgraded to `to` with --fuse-norms, through ONNX's full check.
inline Model fused(const Model& in, int64_t to, UpgradeReport* report = nullptr) {
  UpgradeOptions o;
  o.target = to;
  o.fuse_norms = true;
  return converted_with(in, o, report);
}

// The first fusion's rewrite text ("fused ReduceMean, Sub, ... into ..."); "" when none.
inline std::string fused_what(const UpgradeReport& r) {
  for (const auto& w : r.rewrites)
    if (w.what.rfind("fused ", 0) == 0) return w.what;
  return "";
}

// Why the first decomposition of `op` was left; "" when none was.
inline std::string why_not(const UpgradeReport& r, const std::string& op) {
  for (const auto& m : r.not_fused)
    if (m.op == op) return m.why;
  return "";
}

}  // namespace bnorm::test

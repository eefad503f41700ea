// Internal to the fold verifiers (bn_verify.cpp, norm_affine_verify.cpp):
// the node that produces a value, in whichever graph of the index has it.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "model/graph_index.h"

namespace bnorm {

struct Located {
  const onnx::NodeProto* node = nullptr;
  const GraphIndex::Scope* scope = nullptr;
};

inline Located producer_of(const GraphIndex& index, const std::string& value) {
  for (const auto& s : index.scopes()) {
    auto it = s->values.find(value);
    if (it != s->values.end() && it->second.producer) return {it->second.producer, s.get()};
  }
  return {};
}

}  // namespace bnorm

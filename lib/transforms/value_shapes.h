// inspect --shapes: the element type and shape of every value of every
// graph (graph inputs and node outputs; initializers are left out: their
// shapes are stored), as the shape inference the other commands use gives
// them (ONNX 1.12's, then bnorm's where it stops: model/shape_infer).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace bnorm {

struct ValueShape {
  std::string graph;  // "main", "main/loop.body"
  std::string name;
  std::string type;   // "float", "int64", "?" when unknown
  // The dims: a size, a symbolic name, or "?" when unknown; nullopt when
  // the rank is unknown.
  std::optional<std::vector<std::string>> dims;
  std::string text() const;  // "float[N,3,224,224]", "?[rank ?]"
};

std::vector<ValueShape> value_shapes(const Model& model);

}  // namespace bnorm

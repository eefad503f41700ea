// Weights a fold would materialise: a Conv weight or a BN parameter (or a
// normalization's scale/bias, or its consumer's weight) that the model does
// not store but generates from a few bytes, with ConstantOfShape (possibly
// behind Identity). Folding writes such a tensor out as a new initializer of
// its full size: an 80 KB model can become a 94 MB file. fold warns when it
// does so (naming the node and the model's size before and after) and,
// with FoldOptions::keep_generated, keeps the node unfolded instead.
//
// Constant nodes are not "generated": their data is already stored in the
// model and a fold only moves it into an initializer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/graph_index.h"
#include "model/model.h"

namespace bnorm {

// "ConstantOfShape 'fill'" (the node's label) when `c` is computed by a
// ConstantOfShape, directly or through Identity nodes; empty otherwise.
std::string generated_by(const GraphIndex& index, const GraphIndex::Constant& c);

// The first non-empty generated_by() of `constants`.
std::string first_generated(const GraphIndex& index, const std::vector<const GraphIndex::Constant*>& constants);

// The model's size as stored: the serialized proto (inline tensors) plus
// the bytes of deferred and external tensors. An estimate of the file size.
uint64_t stored_model_bytes(const Model& model);

// "512 B", "80.0 KB", "93.8 MB", "1.2 GB" (1 KB = 1024 B).
std::string size_text(uint64_t bytes);

}  // namespace bnorm

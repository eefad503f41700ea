// validate_model: what every command refuses before it starts, so that no
// command works on (or writes out) a model that is not valid ONNX.
//
// Checked without reading any tensor data:
//   - every tensor (initializers, tensor attributes, in every graph): dims
//     not negative and their product no overflow, the data (raw_data, the
//     typed field, or the side file's location, presence and range) of the
//     size they need;
//   - every graph: each node input names a value (in its graph or an
//     enclosing one), the nodes form no cycle, declared dims not negative;
//   - every BatchNormalization / InstanceNormalization node: its attributes
//     (read_norm_node), 5 (BN) or 3 (IN) inputs, none empty, parameters of a
//     floating type, of the same element count, and of C elements when X's
//     channel count C is declared (spatial nodes);
//   - every Conv, ConvTranspose, MaxPool, AveragePool, LpPool node: strides
//     and dilations of at least 1, and (Conv, ConvTranspose) W of X's rank,
//     at least 3, where the model states the ranks. ONNX 1.12's own shape
//     inference crashes on these (model/onnx_guards.h guards it too, for
//     ranks only inference finds).
// Odd but readable things (invalid output counts, attributes of another
// version) are not errors: inspect reports them as warnings.
#pragma once

#include "model/model.h"

namespace bnorm {

// Throws Error(input) naming the node or tensor (the caller adds the file).
void validate_model(const Model& model);

}  // namespace bnorm

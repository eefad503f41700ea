// bnorm's structural check of a model upgrade writes (check.cpp runs it
// after every conversion, at every opset, with or without --verify; after
// ONNX's checker up to 17, alone above, where ONNX 1.12 knows nothing). A
// model that passes loads in a conforming runtime as far as its structure
// goes:
//   - every default-domain node exists at the opset and fits its schema
//     there (schema.h: input and output counts, required inputs present and
//     only optional ones left empty, required and known attributes, element
//     types where declared or inferred);
//   - its string attributes hold values its version defines
//     (model/attr_values.h);
//   - its subgraphs fit it: If's branches give the node's outputs, Loop's
//     body reads 2 + N values and gives 1 + the node's outputs, Scan's body
//     reads the states and scan inputs (Scan-8: after sequence_lens) and
//     gives the node's outputs.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace bnorm::upgrade_detail {

// One line per problem: "'name' (Op-V): why"; empty when none.
std::vector<std::string> structure_problems(const onnx::ModelProto& m);

// Error(input) listing every problem (nothing written; --no-check writes anyway).
void check_structure(const onnx::ModelProto& m);

}  // namespace bnorm::upgrade_detail

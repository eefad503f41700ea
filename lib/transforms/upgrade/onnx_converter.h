// The ONNX library's side of `bnorm upgrade`: which ops ONNX knows, and
// running its converter on everything but the nodes bnorm converts itself.
//
// ONNX 1.12's converter picks adapters by op name alone (it ignores the
// node's domain) and looks every op name up in its schema table. So a node
// it must not touch is replaced, while it runs, by a placeholder: an op
// name that exists in ONNX's table but only outside the default domain (so
// no adapter ever matches), in bnorm's own domain, with the node's inputs
// and outputs and an id. Shape inference ran before, so the values the
// placeholders produce keep their types for the adapters downstream.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bnorm {
class GraphIndex;
}

namespace bnorm::upgrade_detail {

enum class HiddenKind {
  norm,     // BatchNormalization / InstanceNormalization: bnorm's steps, with --inference and the training checks
  op_step,  // another op one of bnorm's steps matches (steps::own_steps: the table of schema changes)
  foreign,  // another domain, or an op kept as it is: restored unchanged
};

struct Hidden {
  HiddenKind kind;
  onnx::NodeProto original;
  const onnx::NodeProto* inferred = nullptr;  // the same node in the shape-inferred model
};

// The newest ai.onnx opset the linked ONNX library knows (1.12: 17).
int64_t onnx_max_opset();

// Error(unsupported) naming the node and op for an op ONNX removed (e.g.
// ImageScaler, which ended at opset 9) when `to` is past its end, and for
// default-domain ops ONNX does not know at all; going down, for ops that
// do not exist yet at `to` (e.g. ConstantOfShape below 9).
void check_ops(const onnx::ModelProto& model, int64_t from, int64_t to);

// Error(unsupported) naming the node and the input when an op whose ONNX
// adapter needs its inputs' shapes has an input of unknown shape in
// `inferred` (ONNX's adapter asserts): going down, the adapters writing the
// legacy broadcast attributes (Add, Sub, Mul, Div, Pow below 7; Max, Min,
// Mean, Sum below 8); going up across 7, Add ... Pow carrying `broadcast`,
// and Gemm.
void check_broadcast_shapes(const onnx::ModelProto& inferred, int64_t from, int64_t to);

// Replaces the nodes bnorm converts (and those of other domains) by
// placeholders in `work`, a copy of `inferred` (same graphs, same order).
std::vector<Hidden> hide_nodes(onnx::ModelProto& work, const onnx::ModelProto& inferred, int64_t from, int64_t to);

// Attributes a schema version added whose default keeps the older
// version's meaning: a node going below `version` with the attribute at
// its default (absent, 0, or dilations all 1) loses it; with another value
// it goes through ONNX's converter (which refuses it where it has no adapter).
struct DefaultedAttribute {
  const char* op;
  int version;
  const char* attr;
  const char* value;  // the default: an int or a string; "1s": all ones; "": absent
};
const std::vector<DefaultedAttribute>& defaulted_attributes();
// Going down (`to` < `from`), each such attribute of `n` whose value is not
// the default: one line naming it, its value and the version (type_only.cpp).
std::vector<std::string> attributes_without_equivalent(const onnx::NodeProto& n, int64_t from, int64_t to);

// Whether bnorm converts this default-domain node, not BN/IN, itself
// (HiddenKind::op_step) when the model moves from opset `from` to `to`:
// one of the steps named on its op's rows matches it (steps::own_steps).
bool converted_by_own_step(const onnx::NodeProto& n, int64_t from, int64_t to);

// The schema versions of `op` up to 17 whose change only added element
// types, so that a node crosses them downward unchanged (empty: none).
std::vector<int> type_only_versions(const std::string& op);

// Whether `n`, going down from `from` to `to`, crosses only type-only
// changes (and attributes at their defaults) and stays as it is.
bool type_only_downgrade(const onnx::NodeProto& n, int64_t from, int64_t to);

// Going down, every node kept as it is across type-only changes must have
// element types its target version has: Error(unsupported) listing every
// node that does not, with the value and the type (`index` over `inferred`).
void check_kept_types(const onnx::ModelProto& inferred, const GraphIndex& index, int64_t from, int64_t to);

// The hidden node a placeholder stands for; nullptr when `n` is none.
const Hidden* placeholder_of(const onnx::NodeProto& n, const std::vector<Hidden>& hidden);

// Drops the placeholder domain's opset_import.
void forget_placeholder_domain(onnx::ModelProto& m);

// ONNX's converter over the whole model from `from` to `to`. Going down,
// in as many ConvertVersion calls as it takes for each node to be either
// converted by ONNX or kept as it is (type-only schema changes, which
// ONNX 1.12 often lacks adapters for) across each call.
onnx::ModelProto convert_with_onnx(const onnx::ModelProto& work, int64_t from, int64_t to);

// onnx::version_conversion::ConvertVersion; its failures become
// Error(unsupported) in bnorm's words (read_converter_failure), naming the
// op's nodes: never ONNX's raw assertion text.
onnx::ModelProto run_onnx_converter(const onnx::ModelProto& work, int64_t from, int64_t to);

// What an exception of ONNX 1.12's converter says: the op it names (may be
// empty) and why, without the source file, line and "Assertion ... failed".
struct ConverterFailure {
  std::string op, why;
};
ConverterFailure read_converter_failure(const std::string& what);

}  // namespace bnorm::upgrade_detail

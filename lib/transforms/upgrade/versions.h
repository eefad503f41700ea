// What every schema change of the default ONNX domain in opsets 1..28 is,
// for bnorm upgrade: the one table (op, since-version) -> kind, written
// from ONNX 1.23's Changelog.md. The versions themselves come from
// model/op_versions.h; tests/upgrade_versions_test.cpp checks that every
// version in 2..28 of every op has a row here, and that each `types` row
// changes nothing but element types in the schema table (schema.h).
//
//   types  only element types were added: a node crosses it unchanged, when
//          its element types exist at the target version (checked, Error
//          naming the node and the type otherwise)
//   attrs  attributes were added whose default keeps the old meaning:
//          detail "name=default,..." ("1s": all ones; empty: absent; "*":
//          any value, meaningless below, e.g. Cast's saturate, which only
//          acts on float8). Going down they are dropped when at the
//          default; another value is refused, naming it
//   value  an attribute value was added (detail "attr=v1|v2"): going down a
//          node using it is refused
//   step   bnorm's own step converts it: the row carries the Step
//   onnx   opsets <= 17 only: ONNX 1.12's adapter converts it
//   refused  no conversion (detail: why)
//
// A `types` row may carry a Step too, for the nodes its match accepts
// (Constant below 9 with a value Constant-1 lacks; Loop below 11 without a
// loop-carried value): every other node crosses it unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onnx {
class NodeProto;
}

namespace bnorm {

namespace steps {
struct NormSite;  // steps/step.h
}

enum class VersionKind { types, attrs, value, step, onnx, refused };

using StepFn = void (*)(steps::NormSite&);

// One of bnorm's conversion steps, defined in steps/<file>.cpp. The table's
// rows name it; how it runs (steps/run_steps.cpp):
//   - a node runs a step when its match says so: `applies` (from and to are
//     opsets), or, when that is null, when it crosses a row naming the step;
//   - the steps of a node run in the order of their rows crossed (descending
//     going down), `up` going up, `down` going down, each once;
//   - a step moves the node across its row (the runner then sets the
//     site's version past it) or, for a step named on several rows, to the
//     target's version at once (setting the version itself; rows it already
//     crossed are not run again).
// `up` and `down` are never null: a direction a step does not handle is
// refused in it, naming the node.
struct Step {
  const char* name;  // unique: "bn_9_14", "axis_11", "clip_11"
  const char* file;  // steps/<file>.cpp holds it
  StepFn up;
  StepFn down;
  bool (*applies)(const onnx::NodeProto& n, int64_t from, int64_t to) = nullptr;
};

struct VersionChange {
  int version = 0;
  VersionKind kind = VersionKind::onnx;
  const char* detail = "";
  const Step* step = nullptr;  // kind step (and the types rows above)
};

struct OpChanges {
  const char* op;
  std::vector<VersionChange> changes;  // ascending, versions 2..28 of the op (its first version is no change)
};

// The whole table, sorted by op.
const std::vector<OpChanges>& version_changes();

// The row for `op` at since-version `version`, or nullptr.
const VersionChange* version_change(std::string_view op, int version);

// The rows of `op` a node crosses going from `from` to `to` (opsets or
// schema versions: since-versions v with min < v <= max), in the order it
// crosses them (descending going down).
std::vector<const VersionChange*> rows_crossed(std::string_view op, int64_t from, int64_t to);

// Every step the table names, each once, in the order of the table.
std::vector<const Step*> table_steps();

// Whether node `n` runs `step` going from opset `from` to `to`: its
// match, or else whether it crosses a row of its op naming the step.
bool step_applies(const Step& step, const onnx::NodeProto& n, int64_t from, int64_t to);
// Whether it crosses a row of `op` naming `step` (for the matches).
bool crosses_step(const Step& step, std::string_view op, int64_t from, int64_t to);

// The steps, each defined in the file its `file` names.
namespace steps {
extern const Step bn_1_6, bn_6_7, bn_7_9, bn_9_14, bn_14_15, in_1_6;
extern const Step softmax_12_13, axis_11, split, compare_7, variadic_8, reshape_5, lppool_2, tile_6, rnn_7,
    roialign_16, quantize_linear, dropout, cast_1_6, pad_2_11, clip_11, slice_10, topk_10, squeeze_11, resize_10,
    upsample, constant_9, loop_11, consumed_inputs_6, concat_4, reshape_14, scan_8_9, scatter_elements_11;
extern const Step reduce_axes_18, split_18, pad_18, dft_20, gridsample_20, optional_has_element_18, groupnorm_21,
    resize_18, resize_19, attention_24, attention_25, celu_28;
}  // namespace steps

// Since-versions of `op` in 2..17 that only added types or attributes with
// defaults (the ONNX phase keeps such nodes as they are going down, the
// attributes at their default dropped; onnx_converter.cpp).
std::vector<int> type_only_versions_upto_17(std::string_view op);

const char* version_kind_name(VersionKind k);

}  // namespace bnorm

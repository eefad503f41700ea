#include "model/onnx_guards.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>
#include <set>
#include <string>

namespace bnorm {

namespace {

int rank_of(onnx::InferenceContext& ctx, size_t i) {
  if (ctx.getNumInputs() <= i) return -1;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

// Before: ONNX's inference divides by strides and indexes X's shape by W's.
// After: those inputs fail as InferenceError; all others reach ONNX's code.
void check_conv_pool(onnx::InferenceContext& ctx, int w_index) {
  if (const onnx::AttributeProto* a = ctx.getAttribute("strides")) {
    for (const int64_t s : a->ints()) {
      if (s <= 0) fail_shape_inference("strides must be positive, got ", s);
    }
  }
  if (w_index < 0) return;
  const int rx = rank_of(ctx, 0), rw = rank_of(ctx, static_cast<size_t>(w_index));
  if (rw >= 0 && rw < 2) fail_shape_inference("W has rank ", rw, "; it must have the rank of X, at least 3");
  if (rx >= 0 && rw >= 0 && rx != rw) fail_shape_inference("X has rank ", rx, " and W rank ", rw, "; they must be the same");
}

// Before: ONNX 1.12's Gemm-6 inference reads the dims of A and B without
// checking their rank, and dereferences null on a rank-0 input (found by
// fuzz_upgrade: tests/fuzz_regressions/upgrade/gemm6-scalar-input.onnx).
// After: A or B of a known rank other than 2 fails as InferenceError at
// every version, as Gemm-7 and later's own inference does (every version's
// spec has A (M, K) and B (K, N)).
void check_gemm(onnx::InferenceContext& ctx) {
  const char* names[] = {"A", "B"};
  for (size_t i = 0; i < 2; ++i) {
    const int r = rank_of(ctx, i);
    if (r >= 0 && r != 2) fail_shape_inference("input '", names[i], "' has rank ", r, "; Gemm multiplies matrices (rank 2)");
  }
}

// Before: the inference of RNN-1, GRU-3 and LSTM-1 reads dims 0 and 1 of
// any X (later versions check the rank themselves); STFT-17's reads dims of
// any signal; Scan's uses its 'body' graph without checking it is there.
// After: X of a known rank other than 3 ([seq_length, batch_size,
// input_size], every version's spec), a signal of a known rank other than 3
// ([batch_size, signal_length, 1 or 2]) and a Scan without 'body' fail as
// InferenceError.
void check_rank3_input(onnx::InferenceContext& ctx, const char* op, const char* input) {
  const int r = rank_of(ctx, 0);
  if (r >= 0 && r != 3) fail_shape_inference("input '", input, "' has rank ", r, "; ", op, " takes ", input, " of rank 3");
}

void check_scan(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* body = ctx.getAttribute("body");
  if (body == nullptr || !body->has_g()) fail_shape_inference("attribute 'body' is missing; Scan needs its graph");
}

template <class Check>
void wrap_every_version(const std::string& op, const Check& check) {
  std::set<const onnx::OpSchema*> seen;
  for (int v = 1; v <= onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
       ++v) {
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, v, onnx::ONNX_DOMAIN);
    if (s == nullptr || !seen.insert(s).second) continue;
    onnx::InferenceFunction inner = s->GetTypeAndShapeInferenceFunction();
    if (!inner) continue;
    // The registry owns its schemas as non-const objects; it hands out const
    // pointers only. Replacing the function is done once, before any use.
    const_cast<onnx::OpSchema*>(s)->TypeAndShapeInferenceFunction(
        [inner, check](onnx::InferenceContext& ctx) {
          check(ctx);
          inner(ctx);
        });
  }
}

}  // namespace

void install_onnx_inference_guards() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto conv_pool = [](int w_index) {
      return [w_index](onnx::InferenceContext& ctx) { check_conv_pool(ctx, w_index); };
    };
    wrap_every_version("Conv", conv_pool(1));
    wrap_every_version("ConvTranspose", conv_pool(1));
    wrap_every_version("ConvInteger", conv_pool(1));
    wrap_every_version("QLinearConv", conv_pool(3));
    for (const char* pool : {"MaxPool", "AveragePool", "LpPool"}) wrap_every_version(pool, conv_pool(-1));
    wrap_every_version("Gemm", check_gemm);
    for (const char* rnn : {"RNN", "GRU", "LSTM"}) {
      wrap_every_version(rnn, [rnn](onnx::InferenceContext& ctx) { check_rank3_input(ctx, rnn, "X"); });
    }
    wrap_every_version("STFT", [](onnx::InferenceContext& ctx) { check_rank3_input(ctx, "STFT", "signal"); });
    wrap_every_version("Scan", check_scan);
  });
}

}  // namespace bnorm

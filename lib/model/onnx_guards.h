// Guards around ONNX 1.12's shape inference functions that crash the
// process on some invalid nodes instead of reporting them.
//
// ONNX's Conv-family and pooling inference (convPoolShapeInference,
// convTransposeShapeInference) trusts its inputs:
//   - a `strides` value of 0 divides by zero (SIGFPE);
//   - a W whose rank differs from X's, with no kernel_shape, reads dims
//     past the end of X's shape; a ConvTranspose W of rank below 2 reads
//     W's dim 1 (null pointer; found by fuzz_inspect, see
//     tests/fuzz_regressions/inspect/).
// Its Gemm-6 inference dereferences null when A or B has rank 0 (found by
// fuzz_upgrade, tests/fuzz_regressions/upgrade/); a sweep of every op and
// version with inputs of rank 0 to 3 then found RNN-1, GRU-3 and LSTM-1
// (X), STFT-17 (signal) and Scan without its 'body' graph.
// install_onnx_inference_guards() wraps the inference function of every
// version of Conv, ConvTranspose, ConvInteger, QLinearConv, MaxPool,
// AveragePool and LpPool, of Gemm (A and B must have rank 2), RNN, GRU,
// LSTM and STFT (X or signal of rank 3) and Scan (a 'body' graph) in ONNX's
// schema registry with a check that fails the way ONNX's own checks fail
// (onnx::InferenceError) on those inputs.
// Wrapping the schemas, not checking the model beforehand, also covers
// ranks that inference itself derives mid-graph, in subgraphs, inside
// ONNX's checker and inside its version converter.
//
// Idempotent and thread-safe; every entry into ONNX's shape inference in
// bnorm (with_inferred_shapes, check_model_full, the version converter)
// calls it first.
#pragma once

namespace bnorm {

void install_onnx_inference_guards();

}  // namespace bnorm

// The op families, each registering the versions it implements (register.cpp
// in each folder of eval/ops); run/op_table.cpp calls every one.
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

void add_activation_ops(OpRegistry& r);  // eval/ops/activation/register.cpp
void add_attention_ops(OpRegistry& r);  // eval/ops/attention/register.cpp
void add_control_ops(OpRegistry& r);  // eval/ops/control/register.cpp
void add_elementwise_ops(OpRegistry& r);  // eval/ops/elementwise/register.cpp
void add_experimental_ops(OpRegistry& r);  // eval/ops/experimental/register.cpp
void add_indexing_ops(OpRegistry& r);  // eval/ops/indexing/register.cpp
void add_loss_ops(OpRegistry& r);  // eval/ops/loss/register.cpp
void add_math_ops(OpRegistry& r);  // eval/ops/math/register.cpp
void add_nn_conv_ops(OpRegistry& r);  // eval/ops/nn/conv/register.cpp
void add_nn_dropout_ops(OpRegistry& r);  // eval/ops/nn/dropout/register.cpp
void add_nn_norm_ops(OpRegistry& r);  // eval/ops/nn/norm/register.cpp
void add_nn_pool_ops(OpRegistry& r);  // eval/ops/nn/pool/register.cpp
void add_quantization_ops(OpRegistry& r);  // eval/ops/quantization/register.cpp
void add_reduction_ops(OpRegistry& r);  // eval/ops/reduction/register.cpp
void add_resize_ops(OpRegistry& r);  // eval/ops/resize/register.cpp
void add_rnn_ops(OpRegistry& r);  // eval/ops/rnn/register.cpp
void add_sequence_ops(OpRegistry& r);  // eval/ops/sequence/register.cpp
void add_spectral_ops(OpRegistry& r);  // eval/ops/spectral/register.cpp
void add_tensor_ops(OpRegistry& r);  // eval/ops/tensor/register.cpp
void add_text_ops(OpRegistry& r);  // eval/ops/text/register.cpp

}  // namespace bnorm::eval

// The values one graph run sees (the executor's environment, evaluator.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>

#include "eval/run/float64.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "model/model.h"
#include "model/tensor_proto.h"

namespace bnorm::eval {

// The values one graph sees: its own, then its enclosing graphs'.
// Values by name, one scope per graph run. Initializers are decoded on
// first use (find), not up front, and released after their last use like
// every other value: at most the weights in use are decoded at once.
struct Env {
  mutable std::unordered_map<std::string, Value> values;
  mutable std::unordered_map<std::string, const onnx::TensorProto*> lazy;  // initializers not decoded yet
  // The model the initializers are of: decoded as saving it would write them
  // (decode_as_saved: a fold's pending rewrites applied, external data read).
  const Model* model = nullptr;
  // Float64 evaluation (eval/run/float64.h): narrower floating initializers
  // are widened to double as they are decoded.
  bool widen = false;
  const Env* outer = nullptr;

  // Whether `name` is a value here or in an outer scope (decodes nothing).
  bool has(const std::string& name) const {
    for (const Env* e = this; e; e = e->outer) {
      if (e->values.count(name) || e->lazy.count(name)) return true;
    }
    return false;
  }
  const Value* find(const std::string& name) const {
    for (const Env* e = this; e; e = e->outer) {
      auto it = e->values.find(name);
      if (it != e->values.end()) return &it->second;
      auto lz = e->lazy.find(name);
      if (lz != e->lazy.end()) {
        Tensor t = decode_as_saved(*e->model, *lz->second);
        Value v = Value::of(e->widen ? widened(std::move(t)) : std::move(t));
        e->lazy.erase(lz);
        return &e->values.emplace(name, std::move(v)).first->second;
      }
    }
    return nullptr;
  }
  // Drops `name` (its last use is past); a tensor's storage goes back to
  // the thread's buffer pool, if one is installed (model/buffer_pool.h).
  void release(const std::string& name) {
    auto it = values.find(name);
    if (it != values.end()) {
      if (BufferPool* pool = current_buffer_pool(); pool && it->second.is_tensor()) {
        pool->give(std::move(it->second.tensor.bytes));
      }
      values.erase(it);
    }
    lazy.erase(name);
  }
  const Tensor* find_tensor(const std::string& name) const {
    const Value* v = find(name);
    return v && v->is_tensor() ? &v->tensor : nullptr;
  }
};

}  // namespace bnorm::eval

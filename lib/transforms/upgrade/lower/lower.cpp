#include "transforms/upgrade/lower/lower.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/attrs.h"
#include "model/tensor_proto.h"

namespace bnorm::steps {

std::string Lowering::value(const std::string& what) { return s.fresh(s.stem() + "_" + what); }

std::string Lowering::add(const std::string& op, std::vector<std::string> in, const std::string& what,
                          const std::string& out) {
  const std::string o = out.empty() ? value(what) : out;
  s.add_before(op, std::move(in), {o});
  return o;
}

std::string Lowering::scalar(DType t, double v, const std::string& what) {
  Tensor c = Tensor::from_f64(t, {}, {v});
  c.name = value(what);
  s.initializers.push_back(to_proto(c));
  return c.name;
}

std::string Lowering::constant(DType t, const std::vector<int64_t>& dims, const std::vector<double>& values,
                               const std::string& what) {
  Tensor c = Tensor::from_f64(t, dims, values);
  c.name = value(what);
  s.initializers.push_back(to_proto(c));
  s.new_types[c.name] = t;
  s.new_ranks[c.name] = static_cast<int>(dims.size());
  return c.name;
}

std::string Lowering::cast(const std::string& in, DType from, DType to, const std::string& what,
                           const std::string& out) {
  if (from == to && out.empty()) return in;
  const std::string o = out.empty() ? value(what) : out;
  set_cast_to(s.add_before("Cast", {in}, {o}), opset, static_cast<int32_t>(to));
  return o;
}

std::string Lowering::reduce_mean(const std::string& in, const std::vector<int64_t>& axes, const std::string& what,
                                  const std::string& out) {
  const std::string o = out.empty() ? value(what) : out;
  if (opset >= 18) {
    std::vector<std::string> inputs{in};
    if (!axes.empty()) inputs.push_back(s.add_int64s(s.stem() + "_" + what + "_axes", axes));
    s.add_before("ReduceMean", inputs, {o});
  } else {
    onnx::NodeProto& n = s.add_before("ReduceMean", {in}, {o});
    if (!axes.empty()) set_ints(n, "axes", axes);
  }
  return o;
}

std::string Lowering::reshape(const std::string& in, const std::vector<int64_t>& shape, const std::string& what) {
  return add("Reshape", {in, s.add_int64s(s.stem() + "_" + what + "_shape", shape)}, what);
}

std::string Lowering::reshaped_input(int index, const std::vector<int64_t>& shape, const std::string& what) {
  const std::string& v = s.node.input(index);
  const auto c = s.env->index->constant(*s.scope, v);
  if (!c) return reshape(v, shape, what);
  onnx::TensorProto t = *c->tensor;
  int64_t numel = 1, known = 1;
  for (int64_t d : t.dims()) numel *= d;
  for (int64_t d : shape) known *= d < 0 ? 1 : d;
  t.set_name(value(what));
  t.clear_dims();
  for (int64_t d : shape) t.add_dims(d < 0 ? numel / known : d);
  s.initializers.push_back(t);
  s.report.added.push_back(fmt::format("initializer '{}' ({} as [{}])", t.name(), v, fmt::join(t.dims(), ", ")));
  return t.name();
}

DType known_type(const NormSite& s, const std::string& value, const std::string& what) {
  const auto t = s.type_of(value);
  if (!t) refuse(s, fmt::format("the element type of {} '{}' is unknown (shape inference does not give it), so the "
                                "op cannot be written as the ops of its function body", what, value));
  return *t;
}

DType stash_type(const NormSite& s) {
  const int64_t v = attr_int(s.node, "stash_type", 1);
  for (DType t : {DType::float32, DType::float16, DType::float64, DType::bfloat16}) {
    if (static_cast<int64_t>(t) == v) return t;
  }
  refuse(s, fmt::format("stash_type {} is not a floating type", v));
}

std::vector<int64_t> trailing_axes(const NormSite& s, int64_t axis) {
  const auto rank = s.rank_of(s.node.input(0));
  if (!rank) {
    if (axis < 0 && s.target_opset >= 11) {
      std::vector<int64_t> axes;
      for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
      return axes;
    }
    refuse(s, fmt::format("the rank of input '{}' is unknown: the axes from axis {} to the last cannot be written{}",
                          s.node.input(0), axis, axis < 0 ? " for ReduceMean below opset 11 (no negative axes)" : ""));
  }
  const int64_t r = *rank;
  if (axis < -r || axis >= r) refuse(s, fmt::format("axis {} is out of range for input '{}' of rank {}", axis, s.node.input(0), r));
  std::vector<int64_t> axes;
  for (int64_t a = axis < 0 ? axis + r : axis; a < r; ++a) axes.push_back(a);
  return axes;
}

std::vector<int64_t> axes_at_target(const NormSite& s, std::vector<int64_t> axes) {
  const auto rank = s.rank_of(s.node.input(0));
  for (int64_t& a : axes) {
    if (a >= 0) continue;
    if (!rank) {
      if (s.target_opset >= 11) continue;
      refuse(s, fmt::format("axis {} is negative and the rank of input '{}' is unknown: ReduceMean below opset 11 has "
                            "no negative axes", a, s.node.input(0)));
    }
    if (a < -*rank) refuse(s, fmt::format("axis {} is out of range for input '{}' of rank {}", a, s.node.input(0), *rank));
    a += *rank;
  }
  return axes;
}

void require_broadcasting(const NormSite& s) {
  if (s.target_opset < 7) {
    refuse(s, fmt::format("written as the ops of its function body it needs multidirectional broadcasting (Sub, Mul, "
                          "Add, Div), which opsets before 7 do not have (the target is {})", s.target_opset));
  }
}

void require_op(const NormSite& s, const std::string& op, int64_t first_opset) {
  if (s.target_opset < first_opset) {
    refuse(s, fmt::format("written as the ops of its function body it needs {}, which does not exist before opset {} "
                          "(the target is {})", op, first_opset, s.target_opset));
  }
}

std::string lowered_ops(const NormSite& s) {
  std::vector<std::string> ops;
  for (const auto& n : s.before) {
    if (std::find(ops.begin(), ops.end(), n.op_type()) == ops.end()) ops.push_back(n.op_type());
  }
  return fmt::format("{}", fmt::join(ops, ", "));
}

}  // namespace bnorm::steps

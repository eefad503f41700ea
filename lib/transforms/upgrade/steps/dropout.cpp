// Dropout, from any schema version to any other (1, 6, 7, 10, 12, 13), in
// one step: ONNX 1.12's converter has no adapter across 12 in either
// direction for a ratio given as an input, and none from 13 down.
//
//   Before (12+): X, ratio?, training_mode? -> Dropout(seed) -> Y, mask?
//   After  (7-11): X -> Dropout(ratio = the constant ratio) -> Y, mask?
//   After  (1-6):  X -> Dropout(ratio, is_test = 1) -> Y, mask?
// and back up the other way. The facts each version adds or removes:
//   ratio         attribute (default 0.5) below 12, optional input (scalar,
//                 default 0.5) from 12. Down, the input must be a constant.
//   mode          is_test (default 0: training) below 7; nothing at 7-11
//                 (the runtime chooses); the optional training_mode input
//                 (default false) from 12. An inference node stays one
//                 (is_test = 1 going below 7). A training node (is_test = 0
//                 or absent, training_mode a constant true) keeps training
//                 where the target can say so (is_test = 0 below 7,
//                 training_mode = true from 12), with a warning; --inference
//                 makes it an inference node. A training_mode that is not
//                 a constant cannot go below 12: Error naming the node.
//   seed          from 12; dropped below (it only matters in training).
//   consumed_inputs  version 1 only; dropped going up.
//   mask          T below 10, bool from 10: when the mask is used, a Cast
//                 after the node gives its consumers the type they had.
// Y is X in inference at every version, so the numbers never change.
#include <fmt/format.h>

#include "core/error.h"
#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/step.h"
#include "model/node_label.h"

namespace bnorm::steps {

namespace {

struct Plan {
  int from = 0, to = 0;
  std::optional<float> ratio;           // given (attribute or constant input); nullopt: the default
  enum Mode { inference, training, runtime } mode = inference;
  bool mask_used = false;
};

std::optional<double> constant_scalar(const NormSite& s, const std::string& value, const char* what) {
  const auto c = s.env->index->constant(*s.scope, value);
  if (!c) {
    throw Error(ErrorKind::unsupported,
                fmt::format("input '{}' ({}) is not a constant, so it cannot become an attribute below version 12",
                            value, what))
        .at_node(node_label(s.node), "Dropout", s.version);
  }
  const Tensor t = decode_tensor(*c->tensor);
  if (t.numel() != 1) {
    throw Error(ErrorKind::input, fmt::format("input '{}' ({}) must hold one value, has shape {}", value, what,
                                              shape_str(t.dims)))
        .at_node(node_label(s.node), "Dropout", s.version);
  }
  return t.to_f64()[0];
}

Plan match(const NormSite& s, int to) {
  Plan p;
  p.from = s.version;
  p.to = to;
  const onnx::NodeProto& n = s.node;
  if (p.from < 12) {
    if (const auto* a = find_attr(n, "ratio")) p.ratio = a->f();
  } else if (n.input_size() > 1 && !n.input(1).empty()) {
    if (to < 12) p.ratio = static_cast<float>(*constant_scalar(s, n.input(1), "ratio"));
  }
  if (p.from < 7) {
    const auto* a = find_attr(n, "is_test");
    p.mode = a && a->i() != 0 ? Plan::inference : Plan::training;
  } else if (p.from < 12) {
    p.mode = Plan::runtime;
  } else if (n.input_size() > 2 && !n.input(2).empty()) {
    // A constant decides; anything else is training for bnorm (kept from 12 on).
    const bool known = to < 12 || s.env->index->constant(*s.scope, n.input(2)).has_value();
    const bool train = !known || *constant_scalar(s, n.input(2), "training_mode") != 0;
    p.mode = train ? Plan::training : Plan::inference;
  }
  p.mask_used = n.output_size() > 1 && s.is_used(n.output(1));
  return p;
}

void rewrite_mask(NormSite& s, const Plan& p) {
  if (!p.mask_used || (p.from < 10) == (p.to < 10)) return;
  const auto x_type = s.type_of(s.node.input(0));
  if (!x_type) {
    throw Error(ErrorKind::unsupported, "the mask is used and changes type across version 10, but X's type is unknown")
        .at_node(node_label(s.node), "Dropout", s.version);
  }
  const std::string mask = s.node.output(1), raw = s.fresh(mask + "_raw");
  s.node.set_output(1, raw);
  const auto type = p.to >= 10 ? static_cast<onnx::TensorProto::DataType>(*x_type) : onnx::TensorProto::BOOL;
  set_cast_to(s.add_after("Cast", {raw}, {mask}), s.target_opset, type);
  s.report.set.push_back(fmt::format("mask '{}' cast to {} for its consumers", mask,
                                     onnx::TensorProto::DataType_Name(type)));
}

}  // namespace

void dropout_convert(NormSite& s, bool inference) {
  const int to = schema_version("Dropout", s.target_opset);
  Plan p = match(s, to);
  if (inference && p.mode == Plan::training) {
    p.mode = Plan::inference;
    s.report.made_inference = true;
  }
  onnx::NodeProto& n = s.node;
  // The node at `to`: inputs X (+ ratio, training_mode from 12), attributes.
  const std::string x = n.input(0);
  std::vector<std::string> inputs{x};
  if (to >= 12 && p.from >= 12) {
    for (int i = 1; i < n.input_size(); ++i) inputs.push_back(n.input(i));
    if (s.report.made_inference && inputs.size() > 2) inputs.resize(2);
  }
  if (p.from < 12 && to >= 12) {
    if (p.ratio) {
      onnx::TensorProto t;
      t.set_name(s.fresh(s.stem() + "_ratio"));
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_float_data(*p.ratio);
      s.initializers.push_back(t);
      inputs.push_back(t.name());
      s.report.set.push_back(fmt::format("ratio {} as input '{}'", *p.ratio, t.name()));
    }
    if (p.mode == Plan::training) {
      if (inputs.size() < 2) inputs.push_back("");
      onnx::TensorProto t;
      t.set_name(s.fresh(s.stem() + "_training_mode"));
      t.set_data_type(onnx::TensorProto::BOOL);
      t.add_int32_data(1);
      s.initializers.push_back(t);
      inputs.push_back(t.name());
      s.report.set.push_back(fmt::format("training_mode = true as input '{}'", t.name()));
    }
  }
  n.clear_input();
  for (auto& i : inputs) n.add_input(i);

  if (remove_attr(n, "consumed_inputs")) s.report.dropped.push_back("consumed_inputs");
  if (to >= 12 && remove_attr(n, "ratio")) s.report.dropped.push_back("ratio (attribute)");
  if (to < 12 && p.from >= 12) {
    if (remove_attr(n, "seed")) s.report.dropped.push_back("seed");
    if (p.ratio) {
      auto* a = n.add_attribute();
      a->set_name("ratio");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(*p.ratio);
      s.report.set.push_back(fmt::format("ratio = {} (attribute)", *p.ratio));
    }
  }
  if (to >= 7 && remove_attr(n, "is_test")) s.report.dropped.push_back("is_test");
  if (to < 7 && p.from >= 7) {
    set_int(n, "is_test", p.mode == Plan::training ? 0 : 1);
    s.report.set.push_back(fmt::format("is_test = {}", p.mode == Plan::training ? 0 : 1));
  }
  if (to < 7 && s.report.made_inference && p.from < 7) {
    set_int(n, "is_test", 1);
    s.report.set.push_back("is_test = 1");
  }
  if (p.mode == Plan::training && !s.report.made_inference) {
    s.report.warnings.push_back(
        to >= 7 && to < 12
            ? fmt::format("training Dropout: version {} has no mode, the runtime chooses it (inference runtimes pass X "
                          "through); pass --inference to declare it an inference node", to)
            : "training Dropout, kept as training; pass --inference to convert it as an inference node");
  }
  rewrite_mask(s, p);
  s.version = to;
}

namespace {

void dropout_to_target(NormSite& s) { dropout_convert(s, s.inference); }

// Every Dropout whose schema version changes (13 only added bfloat16, but
// dropout_convert is what checks the mask's type there too).
bool dropout_applies(const onnx::NodeProto&, int64_t from, int64_t to) {
  return schema_version("Dropout", from) != schema_version("Dropout", to);
}

}  // namespace

const Step dropout{"dropout", "dropout", dropout_to_target, dropout_to_target, dropout_applies};

}  // namespace bnorm::steps

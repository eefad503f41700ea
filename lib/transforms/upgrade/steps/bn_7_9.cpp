// BatchNormalization 7 <-> 9: `spatial` removed; parameters are always per channel.
//
//   spatial = 1 (or absent): the attribute is dropped, nothing else changes.
//
//   spatial = 0, X of rank > 2 (parameters per activation, shape [C, D1, ..., Dn]):
//   Before (BN-7): X [N, C, D1..Dn] -> BN(spatial=0) -> Y
//   After  (BN-9): X -> Flatten(axis=1) -> X' [N, C*D1*..*Dn]
//                  scale', B', mean', var' [C*D1*..*Dn]   (constants: reshaped copies;
//                                                          otherwise Reshape(p, [-1]))
//                  BN(X', scale', B', mean', var') -> Y' -> Reshape(Y', [0, C, D1..Dn]) -> Y
//                  used training outputs: Reshape(o', [C, D1..Dn]) -> o
//
// Formula: BN-9 on [N, C*D] normalizes each of the C*D features with its own
// parameters, and in training takes statistics over the batch axis only:
// exactly spatial = 0. The shape Y is reshaped to is [0, C, D1..Dn] (0 copies N)
// when the parameters' or X's shape is known, else the runtime Shape(X).
// With X of rank 2 spatial = 0 and 1 coincide: the attribute is just dropped.
// Down: nothing to do; BN-7's default spatial = 1 is BN-9's meaning.
#include <fmt/format.h>

#include "core/error.h"
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

struct Plan {
  bool rewrite = false;
  std::optional<int64_t> spatial;
  std::vector<int64_t> y_shape;       // empty: runtime Shape(X)
  std::vector<int64_t> param_shape;   // empty: runtime Shape(mean)
};

bool fully_known(const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

Plan match_up(const NormSite& s) {
  const NormNode n = s.read();
  Plan p;
  p.spatial = n.spatial_attr;
  if (n.spatial) return p;
  const auto x_dims = s.dims_of(s.node.input(0));
  if (s.rank_of(s.node.input(0)) == 2) return p;
  p.rewrite = true;
  const auto param = s.dims_of(s.node.input(3));
  if (param && param->size() >= 2 && fully_known(*param)) {
    p.param_shape = *param;
    p.y_shape = {0};
    p.y_shape.insert(p.y_shape.end(), param->begin(), param->end());
  } else if (x_dims && x_dims->size() > 2 && fully_known({x_dims->begin() + 1, x_dims->end()})) {
    p.y_shape = {0};
    p.y_shape.insert(p.y_shape.end(), x_dims->begin() + 1, x_dims->end());
  }
  return p;
}

void reshape_back(NormSite& s, int output, const std::vector<int64_t>& shape, const std::string& like) {
  const std::string name = s.node.output(output);
  const std::string inner = s.fresh(name + "_flat");
  s.node.set_output(output, inner);
  if (output > 0 && !s.is_used(name)) return;
  std::string shape_value;
  if (!shape.empty()) {
    shape_value = s.add_int64s(name + "_shape", shape);
  } else {
    shape_value = s.fresh(like + "_shape");
    s.add_before("Shape", {like}, {shape_value});
  }
  s.add_after("Reshape", {inner, shape_value}, {name});
}

void rewrite_spatial0(NormSite& s, const Plan& p) {
  const std::string x = s.node.input(0);
  const std::string x_flat = s.fresh(x + "_flat");
  const std::string mean = s.node.input(3);
  set_int(s.add_before("Flatten", {x}, {x_flat}), "axis", 1);
  for (int i = 1; i < 5 && i < s.node.input_size(); ++i) s.node.set_input(i, as_vector(s, s.node.input(i)));
  s.node.set_input(0, x_flat);
  if (auto t = s.type_of(x)) s.new_types[x_flat] = *t;
  s.new_ranks[x_flat] = 2;
  reshape_back(s, 0, p.y_shape, x);
  for (int o = 1; o < s.node.output_size() && o < 5; ++o) {
    if (!s.node.output(o).empty()) reshape_back(s, o, p.param_shape, mean);
  }
}

}  // namespace

void bn_7_9_up(NormSite& s) {
  const Plan p = match_up(s);
  remove_attr(s.node, "spatial");
  if (p.spatial) s.report.dropped.push_back(fmt::format("spatial = {}", *p.spatial));
  if (p.rewrite) rewrite_spatial0(s, p);
}

void bn_7_9_down(NormSite&) {}

const Step bn_7_9{"bn_7_9", "bn_7_9", bn_7_9_up, bn_7_9_down};

}  // namespace bnorm::steps

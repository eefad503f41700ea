// RoiAlign 16 -> 15 and below (ONNX 1.12: "No Adapter From Version $16 for
// RoiAlign"); going up coordinate_transformation_mode = output_half_pixel
// is written (as ONNX's adapter does).
//
//   RoiAlign-10: rois scaled by spatial_scale, not shifted, each roi at
//                least 1 x 1 (output_half_pixel, the only behaviour)
//   RoiAlign-16: coordinate_transformation_mode half_pixel (the default:
//                scaled rois shifted by -0.5, no minimum size) or
//                output_half_pixel (version 10's behaviour)
//
//   Before (16): RoiAlign(X, rois, idx)  mode half_pixel, spatial_scale s
//   After  (10): RoiAlign(X, rois', idx) rois' = rois - 0.5 / s
//                (rois' * s = rois * s - 0.5, what half_pixel computes)
//
// output_half_pixel: the attribute dropped. half_pixel: constant rois are
// shifted in a new initializer (computed in float64, rounded once to the
// rois' type: within half an ulp of each coordinate, so the sampling points
// move by at most that times s); each roi must be at least 1 x 1 after
// scaling (version 10 widens smaller ones: refused, naming the node). Other
// rois get Sub(rois, 0.5 / s) and a warning that rois smaller than 1 x 1
// after scaling come out differently. Element types must exist at the target.
#include <fmt/format.h>

#include "model/tensor_proto.h"
#include "transforms/upgrade/steps/onnx_gaps.h"

namespace bnorm::steps {

namespace {

void set_str(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  remove_attr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace

void roialign_convert(NormSite& s) {
  const int to = schema_version("RoiAlign", s.target_opset);
  onnx::NodeProto& n = s.node;
  if (to >= 16 && s.version < 16) {  // up: version 10's behaviour, said explicitly
    set_str(n, "coordinate_transformation_mode", "output_half_pixel");
    s.report.set.push_back("coordinate_transformation_mode = output_half_pixel");
  }
  if (to >= 16 || s.version < 16) {
    s.version = to;
    return;
  }
  refuse_missing_types(s, to);
  const auto* m = find_attr(n, "coordinate_transformation_mode");
  const std::string mode = m ? m->s() : "half_pixel";
  if (mode != "half_pixel" && mode != "output_half_pixel") refuse(s, fmt::format("unknown coordinate_transformation_mode '{}'", mode));
  const auto* sc = find_attr(n, "spatial_scale");
  const double scale = sc ? sc->f() : 1.0;
  std::optional<Tensor> rois;
  if (mode == "half_pixel") {
    if (scale == 0) refuse(s, "spatial_scale = 0: half_pixel's shift of -0.5 cannot be moved into the rois");
    rois = constant_input(s, 1);
    if (rois) {
      const std::vector<double> v = rois->to_f64();
      for (size_t r = 0; r + 3 < v.size(); r += 4) {
        if ((v[r + 2] - v[r]) * scale < 1.0 || (v[r + 3] - v[r + 1]) * scale < 1.0) {
          refuse(s, fmt::format("roi {} of '{}' is smaller than 1 x 1 after spatial_scale; version 10 widens it to 1 "
                                "(output_half_pixel), half_pixel does not", r / 4, n.input(1)));
        }
      }
    } else if (!s.type_of(n.input(1))) {
      refuse(s, fmt::format("the type of input '{}' (rois) is unknown", n.input(1)));
    }
  }
  remove_attr(n, "coordinate_transformation_mode");
  s.report.dropped.push_back(fmt::format("coordinate_transformation_mode = {}", mode));
  if (mode == "output_half_pixel") {
    s.version = to;
    return;
  }
  const double shift = 0.5 / scale;
  const std::string old = n.input(1);
  if (rois) {
    std::vector<double> v = rois->to_f64();
    for (double& x : v) x -= shift;
    Tensor t = Tensor::from_f64(rois->dtype, rois->dims, v);
    t.name = s.fresh(old + "_half_pixel");
    s.initializers.push_back(to_proto(t));
    n.set_input(1, t.name);
    s.report.set.push_back(fmt::format("rois shifted by -0.5 / spatial_scale in '{}'", t.name));
  } else {
    Tensor t = Tensor::from_f64(*s.type_of(old), {}, {shift});
    t.name = s.fresh(s.stem() + "_half_pixel_shift");
    s.initializers.push_back(to_proto(t));
    const std::string out = s.fresh(old + "_half_pixel");
    s.add_before("Sub", {old, t.name}, {out});
    n.set_input(1, out);
    s.report.set.push_back(fmt::format("rois shifted by -0.5 / spatial_scale at run time ('{}')", out));
    s.report.warnings.push_back("coordinate_transformation_mode half_pixel: rois smaller than 1 x 1 after spatial_scale "
                                "are widened to 1 by version 10 and come out differently");
  }
  s.version = to;
}

const Step roialign_16{"roialign_16", "roialign_16", roialign_convert, roialign_convert};

}  // namespace bnorm::steps

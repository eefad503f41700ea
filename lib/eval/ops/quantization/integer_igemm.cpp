// See integer_igemm.h.
#include "model/buffer_pool.h"
#include "eval/ops/quantization/integer_igemm.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "eval/ops/nn/conv/geometry.h"
#include "eval/run/numeric.h"
#include "kernels/igemm.h"

namespace bnorm::eval {

namespace {

bool int8_type(DType t) { return t == DType::int8 || t == DType::uint8; }

bool scalar(const Tensor& t) { return t.dims.size() <= 1 && t.numel() == 1; }

// A zero point of x's type, one value or `count` values along a 1-D
// vector; empty when absent (all 0).
bool zero_points(const Tensor* zp, const Tensor& x, int64_t count, std::vector<int32_t>& out) {
  if (!zp) return true;
  if (zp->dtype != x.dtype || !(scalar(*zp) || (zp->dims.size() == 1 && zp->dims[0] == count))) return false;
  for (int64_t i = 0; i < zp->numel(); ++i) {
    out.push_back(x.dtype == DType::int8 ? zp->data<int8_t>()[i] : zp->data<uint8_t>()[i]);
  }
  return true;
}

kernels::IgemmOperand operand(const void* data, size_t ld, const Tensor& t, const std::vector<int32_t>& zp) {
  return {data, ld, t.dtype == DType::int8, zp.empty() ? nullptr : zp.data(), zp.size() > 1 ? size_t{1} : 0};
}

}  // namespace

bool igemm_matmul(const Tensor& a, const Tensor* azp, const Tensor& b, const Tensor* bzp, int64_t max_k, Tensor& acc) {
  if (!int8_type(a.dtype) || !int8_type(b.dtype) || a.dims.size() < 2 || b.dims.size() < 2) return false;
  const size_t ra = a.dims.size(), rb = b.dims.size();
  const int64_t m = a.dims[ra - 2], k = a.dims[ra - 1], n = b.dims[rb - 1];
  const bool shared_b = rb == 2, same_batch = ra == rb && std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin());
  if (b.dims[rb - 2] != k || k > max_k || !(shared_b || same_batch)) return false;
  std::vector<int32_t> za, zb;
  if (!zero_points(azp, a, ra == 2 && m != 1 ? m : 1, za) || !zero_points(bzp, b, n, zb)) return false;
  std::vector<int64_t> dims(a.dims.begin(), a.dims.end() - 1);
  dims.push_back(n);
  acc = Tensor(DType::int32, dims);
  const int64_t batches = product(dims) / std::max<int64_t>(m * n, 1);
  if (shared_b) {  // every batch of A's rows against the one B
    kernels::igemm(operand(a.data<uint8_t>(), static_cast<size_t>(k), a, za),
                   operand(b.data<uint8_t>(), static_cast<size_t>(n), b, zb), acc.data<int32_t>(),
                   static_cast<size_t>(n), static_cast<size_t>(batches * m), static_cast<size_t>(n),
                   static_cast<size_t>(k));
    return true;
  }
  for (int64_t i = 0; i < batches; ++i) {
    kernels::igemm(operand(a.data<uint8_t>() + i * m * k, static_cast<size_t>(k), a, za),
                   operand(b.data<uint8_t>() + i * k * n, static_cast<size_t>(n), b, zb),
                   acc.data<int32_t>() + i * m * n, static_cast<size_t>(n), static_cast<size_t>(m),
                   static_cast<size_t>(n), static_cast<size_t>(k));
  }
  return true;
}

bool igemm_conv(const OpContext& ctx, const Tensor& x, const Tensor* xzp, const Tensor& w, const Tensor* wzp,
                int64_t max_k, Tensor& acc) {
  if (!int8_type(x.dtype) || !int8_type(w.dtype) || x.dims.size() < 3 || x.dims.size() > 5 ||
      w.dims.size() != x.dims.size()) {
    return false;
  }
  std::vector<int32_t> zx, zw;
  if (!zero_points(xzp, x, 1, zx) || !zero_points(wzp, w, w.dims[0], zw)) return false;
  const ConvShape s = conv_shape(ctx, x, w, ctx.node->op_type().c_str());
  const ConvGeometry& g = s.g;
  const int64_t cg = s.c / s.group, mg = s.m / s.group, k = cg * g.kernel_size(), os = g.out_size();
  if (k > max_k) return false;
  acc = Tensor(DType::int32, s.ydims);
  const bool direct = g.kernel_size() == 1 && g.stride[0] * g.stride[1] * g.stride[2] == 1 &&
                      g.pad[0] + g.pad[1] + g.pad[2] == 0;
  // Columns of the im2col matrix made at once: about 256 KiB, whole blocks
  // of igemm's panels.
  const int64_t width = std::min(os, std::max<int64_t>(256, (int64_t{1} << 18) / std::max<int64_t>(k, 1) / 256 * 256));
  PooledScratch col(direct ? 0 : static_cast<size_t>(k * width));
  // The padding holds the zero point, so that it adds nothing (x - x_zp = 0).
  const auto pad = static_cast<uint8_t>(zx.empty() ? 0 : zx[0]);
  const auto* vx = x.data<uint8_t>();
  const auto* vw = w.data<uint8_t>();
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t gi = 0; gi < s.group; ++gi) {
      const uint8_t* xg = vx + (i * s.c + gi * cg) * g.in_size();
      std::vector<int32_t> zg;  // this group's rows of w_zero_point
      if (zw.size() > 1) zg.assign(zw.begin() + gi * mg, zw.begin() + (gi + 1) * mg);
      const kernels::IgemmOperand wa = operand(vw + gi * mg * k, static_cast<size_t>(k), w, zw.size() > 1 ? zg : zw);
      int32_t* yg = acc.data<int32_t>() + (i * s.m + gi * mg) * os;
      if (direct) {
        kernels::igemm(wa, operand(xg, static_cast<size_t>(os), x, zx), yg, static_cast<size_t>(os),
                       static_cast<size_t>(mg), static_cast<size_t>(os), static_cast<size_t>(k));
        continue;
      }
      for (int64_t j0 = 0; j0 < os; j0 += width) {
        const int64_t j1 = std::min(os, j0 + width);
        im2col(xg, cg, g, j0, j1, col.as<uint8_t>(), pad);
        kernels::igemm(wa, operand(col.as<uint8_t>(), static_cast<size_t>(j1 - j0), x, zx), yg + j0, static_cast<size_t>(os),
                       static_cast<size_t>(mg), static_cast<size_t>(j1 - j0), static_cast<size_t>(k));
      }
    }
  return true;
}

}  // namespace bnorm::eval

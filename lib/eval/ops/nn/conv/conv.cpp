// Convolutions: Conv here, ConvTranspose in conv_transpose.cpp (the
// attributes and geometry both read: geometry.cpp), 1-D to 3-D, with group, strides,
// dilations, pads and auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER) and
// an optional bias; ConvTranspose also output_padding and output_shape.
//
//   Conv           X [N, C, D..], W [M, C/group, K..] -> [N, M, O..]
//                  O = floor((D + pad_begin + pad_end - ((K-1)*dil+1)) / stride) + 1
//                  SAME_*: O = ceil(D / stride), the total padding split with
//                  the extra one at the end (UPPER) or the beginning (LOWER).
//   ConvTranspose  X [N, C, D..], W [C, M/group, K..] -> [N, M, O..]
//                  O = stride*(D-1) + output_padding + ((K-1)*dil+1) - pad_begin - pad_end
//                  output_shape (or SAME_*: O = D * stride) fixes O and the
//                  pads follow from it as the ONNX spec gives.
// Conv is computed as im2col plus one matrix product per image and group
// (gemm_kernel.h: each output summed in (c, kz, ky, kx) order, each product
// fused with its sum and rounded once to float, double for double), or,
// for groups of one input channel (depthwise), by kernels::conv_plane,
// which gives the same bits directly; the bias is added to each rounded
// sum. Spatial dims are padded to 3 with ones.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <fmt/format.h>
#include <omp.h>

#include "model/attrs.h"
#include "eval/ops/math/gemm_kernel.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "model/buffer_pool.h"
#include "eval/ops/nn/conv/geometry.h"
#include "eval/ops/nn/conv/ops.h"
#include "kernels/bn_infer.h"
#include "kernels/conv_plane.h"

namespace bnorm::eval {

namespace {

using Geometry = ConvGeometry;

void bn_rows(float* y, int64_t ld, int64_t c0, int64_t rows, int64_t cols, const kernels::BnInferParams<float>* p,
             const kernels::Activation& act) {
  kernels::bn_infer_rows_f32(y, static_cast<size_t>(ld), static_cast<size_t>(c0), static_cast<size_t>(rows),
                             static_cast<size_t>(cols), p, act);
}
void bn_rows(double* y, int64_t ld, int64_t c0, int64_t rows, int64_t cols, const kernels::BnInferParams<double>* p,
             const kernels::Activation& act) {
  kernels::bn_infer_rows_f64(y, static_cast<size_t>(ld), static_cast<size_t>(c0), static_cast<size_t>(rows),
                             static_cast<size_t>(cols), p, act);
}

// What Conv does to each stretch of its output once the products are
// summed, while the stretch is in cache: the bias; then, when the executor
// fused them (OpContext::norm_after, fused), the BatchNormalization after
// the Conv and the activation, with the kernels those ops run (the same
// bits as the nodes apart).
template <typename T>
struct Finish {
  const T* bias = nullptr;                         // [M]
  const kernels::BnInferParams<T>* norm = nullptr;  // [M] each
  const T* residual = nullptr;                     // Y's shape: added element by element (Add's a + b)
  const T* y_base = nullptr;                       // Y's data: where `residual` lines up
  const kernels::Activation* act = nullptr;

  // Rows [c0, c0 + rows) of the output's channels, ld apart, cols each.
  void operator()(T* y, int64_t ld, int64_t c0, int64_t rows, int64_t cols) const {
    add_bias_rows(y, ld, bias ? bias + c0 : nullptr, rows, cols);
    const kernels::Activation none;
    if (!residual) {
      if (norm || act) bn_rows(y, ld, c0, rows, cols, norm, act ? *act : none);
      return;
    }
    if (norm) bn_rows(y, ld, c0, rows, cols, norm, none);
    const T* r = residual + (y - y_base);
    for (int64_t k = 0; k < rows; ++k) {
      T* row = y + k * ld;
      const T* add = r + k * ld;
      for (int64_t j = 0; j < cols; ++j) row[j] = row[j] + add[j];
    }
    if (act) bn_rows(y, ld, c0, rows, cols, nullptr, *act);
  }
};

// How one image and group is computed: the direct kernel when the group
// has one input channel and the convolution is 1-D or 2-D (same bits as
// im2col + gemm, kernels/conv_plane.h), X itself as gemm's B for a 1x1
// kernel without stride or padding, else im2col and one gemm.
enum class ConvPath { plane, direct, im2col };

// Rows of the im2col matrix made at once: a product of more rows adds its
// chunks' products in row order (gemm's accumulate: the same sums), so
// that a stretch of the matrix stays in L2 however deep the kernel is.
// Columns made at once: 512 KiB of floats with the rows, in multiples of
// 256 (whole blocks of gemm's panels), all of them when fewer.
int64_t im2col_chunk(int64_t rows) { return std::min<int64_t>(rows, 256); }
int64_t im2col_width(int64_t rows, int64_t columns) {
  const int64_t width = std::max<int64_t>(256, (int64_t{1} << 17) / im2col_chunk(std::max<int64_t>(rows, 1)) / 256 * 256);
  return std::min(width, columns);
}

ConvPath conv_path(int64_t cg, const Geometry& g) {
  if (cg == 1 && g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.pad[0] == 0) return ConvPath::plane;
  const bool unit = g.kernel_size() == 1 && g.stride[0] * g.stride[1] * g.stride[2] == 1;
  return unit && g.pad[0] + g.pad[1] + g.pad[2] == 0 ? ConvPath::direct : ConvPath::im2col;
}

// Below this many multiply-adds a convolution runs on the calling thread.
constexpr double kParallelWork = 1 << 21;

template <typename T>
void conv_plane_group(const T* xg, const T* wg, T* yg, int64_t mg, const Geometry& g, const Finish<T>& finish,
                      int64_t c0) {
  const auto u = [](int64_t v) { return static_cast<size_t>(v); };
  const kernels::ConvPlane p{u(g.in[1]),  u(g.in[2]),  u(g.kernel[1]), u(g.kernel[2]), u(g.out[1]), u(g.out[2]),
                             u(g.stride[1]), u(g.stride[2]), u(g.dil[1]), u(g.dil[2]), u(g.pad[1]), u(g.pad[2])};
  for (int64_t j = 0; j < mg; ++j) {
    kernels::conv_plane(xg, wg + j * g.kernel_size(), yg + j * g.out_size(), p);
    finish(yg + j * g.out_size(), 0, c0 + j, 1, g.out_size());
  }
}

// One image and group by im2col + gemm (or X itself for `direct`). The
// im2col matrix is made a stretch of columns and a chunk of rows at a
// time, small enough to stay in L2 while the product reads it, each chunk
// added to the sums of the ones before; stretches go to OpenMP threads,
// each with its own part of `col` (`col_size` elements). Columns and
// chunks apart, every sum is the same.
template <typename T>
void conv_gemm_group(const T* xg, const T* wg, T* yg, int64_t cg, int64_t mg, const Geometry& g, bool direct,
                     T* col, int64_t col_size, const Finish<T>& finish, int64_t c0) {
  const int64_t k = cg * g.kernel_size(), os = g.out_size();
  if (direct) {
    gemm<T>(wg, k, xg, os, yg, os, mg, os, k, false);
    finish(yg, os, c0, mg, os);
    return;
  }
  const int64_t width = im2col_width(k, os), stretches = (os + width - 1) / width;
  // One stretch: its columns, rows [i0, i1) of the output's channels, the
  // im2col chunks made in `own`.
  auto stretch = [&](int64_t s, int64_t i0, int64_t i1, T* own) {
    const int64_t j0 = s * width, j1 = std::min(os, j0 + width);
    int64_t p0 = 0;
    do {  // once at least: a product of no rows is zeros
      const int64_t p1 = std::min(k, p0 + im2col_chunk(k));
      im2col(xg, cg, g, j0, j1, own, T(0), p0, p1);
      gemm<T>(wg + i0 * k + p0, k, own, j1 - j0, yg + i0 * os + j0, os, i1 - i0, j1 - j0, p1 - p0, p0 > 0);
      p0 = p1;
    } while (p0 < k);
    finish(yg + i0 * os + j0, os, c0 + i0, i1 - i0, j1 - j0);
  };
  // Threads take whole stretches when there are enough of them, else
  // parts of the channels, each thread making its own im2col chunks: one
  // parallel region for the whole product either way (a region per chunk
  // costs a wake-up each with passive waits).
  const int64_t threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const bool big = static_cast<double>(mg * os) * static_cast<double>(k) >= kParallelWork && threads > 1;
  if (big && stretches >= threads) {
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < stretches; ++s) stretch(s, 0, mg, col + omp_get_thread_num() * col_size);
    return;
  }
  const int64_t parts = big ? std::min<int64_t>(threads, (mg + 23) / 24) : 1;
#pragma omp parallel num_threads(static_cast<int>(parts)) if (parts > 1)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads(), steps = (mg + 23) / 24;
    const int64_t i0 = std::min(mg, steps * t / nt * 24), i1 = std::min(mg, steps * (t + 1) / nt * 24);
    for (int64_t s = 0; s < stretches && i1 > i0; ++s) stretch(s, i0, i1, col + t * col_size);
  }
}

// One image by the product transposed, Y^T = im2col^T W^T, with the
// weights packed once (kernels::gemm_packed): the output positions are
// the product's rows, the channels its columns, so a 7 x 7 map's 49
// positions no longer fill 64 lanes. Threads take parts of the positions
// (one parallel region for the whole product), each making its columns of
// the im2col matrix a chunk of rows at a time (or reading X for `direct`),
// transposing them into its `at`, computing its rows of `yt` [os, m] and
// transposing them into Y. The same sums as conv_gemm_group.
// `scratch`: 2 * chunk * os elements.
template <typename T>
void conv_transposed(const T* x, const kernels::GemmPacked<T>& packed, T* y, int64_t cg, const Geometry& g,
                     bool direct, int64_t chunk, T* scratch, T* yt, const Finish<T>& finish) {
  const auto u = [](int64_t v) { return static_cast<size_t>(v); };
  const int64_t k = cg * g.kernel_size(), os = g.out_size(), m = static_cast<int64_t>(packed.n);
  const int64_t threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const bool big = static_cast<double>(m * os) * static_cast<double>(k) >= kParallelWork && threads > 1;
  const int64_t parts = big ? std::min<int64_t>(threads, (os + 11) / 12) : 1;
#pragma omp parallel num_threads(static_cast<int>(parts)) if (parts > 1)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t j0 = os * t / nt, j1 = os * (t + 1) / nt, w = j1 - j0;
    T* col = scratch + 2 * chunk * j0;
    T* at = col + chunk * w;
    int64_t p0 = 0;
    do {  // once at least: a product of no rows is zeros
      const int64_t p1 = std::min(k, p0 + chunk);
      if (direct) {
        transpose_into(x + p0 * os + j0, p1 - p0, w, at, os);
      } else {
        im2col(x, cg, g, j0, j1, col, T(0), p0, p1);
        transpose_into(col, p1 - p0, w, at);
      }
      kernels::gemm_packed(at, u(p1 - p0), packed, u(p0), yt + j0 * m, u(m), u(w), u(p1 - p0), p0 > 0);
      p0 = p1;
    } while (p0 < k && w > 0);
    transpose_into(yt + j0 * m, w, m, y + j0, m, os);
    if (w > 0) finish(y + j0, os, 0, m, w);
  }
}

// Whether a product of few columns (output positions) and many rows
// (channels) runs transposed, the weights packed once: when the panels'
// padding wastes much of the product the usual way and less so (ResNet's
// 7 x 7 maps: 49 columns in 64 lanes, 512 channels in whole panels).
// Only with one group. Measured on AMD Zen 5: 14 x 14 maps (196 in 224
// lanes) ran slower so.
bool transposed_product(int64_t k, int64_t m, int64_t os, int64_t group) {
  if (group != 1 || k <= 0 || os > 256) return false;
  const int64_t panel = 32;  // the widest panel (float at the Avx512 level)
  const auto padded = [&](int64_t v) { return (v + panel - 1) / panel * panel; };
  const double usual = static_cast<double>(padded(os) * m), transposed = static_cast<double>(padded(m) * os);
  return usual > std::max(1.15 * static_cast<double>(m * os), transposed);
}

// The weights [m, k] packed for kernels::gemm_packed: kept by the runs'
// cache (under a key naming the packing's layout) when W is constant and
// there is one, else nullptr (the product runs as usual).
template <typename T>
const Tensor* packed_weights(const OpContext& ctx, const T* w, int64_t m, int64_t k) {
  const std::string what = fmt::format("packed for transposed products: {} in layout {}", dtype_name(dtype_of<T>()),
                                       kernels::gemm_packed_layout());
  return ctx.prepared(1, what, [&] {
    const auto u = [](int64_t v) { return static_cast<size_t>(v); };
    const size_t size = kernels::gemm_packed_size(w, u(k), u(m));
    Tensor t = tensor_for_overwrite(dtype_of<T>(), {checked_buffer_numel({static_cast<int64_t>(size)}, sizeof(T),
                                                                         "Conv's packed weights")});
    kernels::gemm_pack_transposed(w, u(k), u(k), u(m), t.data<T>());
    return t;
  });
}

}  // namespace

ConvShape conv_shape(const OpContext& ctx, const Tensor& x, const Tensor& w, const char* op) {
  check_conv_ranks(x, w);
  const size_t nd = x.dims.size() - 2, lead = kDims - nd;
  const ConvAttrs a = read_conv_attrs(*ctx.node, nd);
  const int64_t group = attr_int(*ctx.node, "group", 1);
  const int64_t n = x.dims[0], c = x.dims[1], m = w.dims[0];
  if (group <= 0 || c % group || m % group || w.dims[1] != c / group) {
    fail(ErrorKind::input, "W {} does not match X {} with group {}", shape_str(w.dims), shape_str(x.dims), group);
  }
  ConvShape shape{{}, n, c, m, group, {}};
  Geometry& g = shape.g;
  fill_geometry(g, a, x, w);
  for (size_t d = lead; d < kDims; ++d) {
    const int64_t span = (g.kernel[d] - 1) * g.dil[d] + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      g.out[d] = (g.in[d] + g.stride[d] - 1) / g.stride[d];
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * g.stride[d] + span - g.in[d]);
      g.pad[d] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      g.out[d] = (g.in[d] + a.pad_begin[d - lead] + a.pad_end[d - lead] - span) / g.stride[d] + 1;
    }
    if (g.out[d] <= 0) fail(ErrorKind::input, "the kernel {} is larger than the padded input {}", shape_str(w.dims), shape_str(x.dims));
  }
  // First at one byte an element: out_size() and the offsets below cannot overflow.
  shape.ydims = conv_out_dims(x, m, g);
  checked_buffer_numel(shape.ydims, 1, std::string("the output of ") + op);
  return shape;
}

Tensors op_conv(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  const Tensor& w = ctx.required(1, "W");
  const Tensor* b = ctx.input(2);
  const ConvShape shape = conv_shape(ctx, x, w, "Conv");
  const Geometry& g = shape.g;
  const int64_t n = shape.n, c = shape.c, m = shape.m, group = shape.group;
  const std::vector<int64_t>& ydims = shape.ydims;
  if (b && (b->dims.size() != 1 || b->dims[0] != m)) fail(ErrorKind::input, "input 'B' has shape {}, expected [{}]", shape_str(b->dims), m);
  const int64_t cg = c / group, mg = m / group, ks = g.kernel_size(), os = g.out_size(), is = g.in_size();
  Tensors out(1);
  out[0] = tensor_for_overwrite(x.dtype, ydims);  // every element is written below
  with_float_type(x.dtype, "input 'X'", [&](auto tag) {
    using T = decltype(tag);
    const bool own = x.dtype == dtype_of<T>();
    std::vector<T> kx, kw, ky;
    if (!own) ky.resize(static_cast<size_t>(out[0].numel()));
    T* y = own ? out[0].data<T>() : ky.data();
    const T* vx = values_as<T>(x, kx);
    const T* vw = values_as<T>(w, kw);
    std::vector<T> kb;
    Finish<T> finish;
    finish.bias = b ? values_as<T>(*b, kb) : nullptr;
    // A fused BatchNormalization's parameters as that op reads them (P = T).
    std::vector<T> ns, nb, nm, nv;
    kernels::BnInferParams<T> norm{};
    if (ctx.norm_after || ctx.fused || ctx.residual) {
      if (!own) fail(ErrorKind::unsupported, "a Conv of {} cannot apply the nodes after it", dtype_name(x.dtype));
      finish.act = ctx.fused;
    }
    if (const Tensor* r = ctx.residual) {
      // Added only with Y's type and shape (Add's broadcasting is not done
      // here), and then the activation after it; else both run as nodes.
      if (r->dtype == x.dtype && r->dims == ydims && ctx.residual_added) {
        finish.residual = r->data<T>();
        finish.y_base = y;
        *ctx.residual_added = true;
      } else {
        finish.act = nullptr;
      }
    }
    if (const OpContext::NormAfter* na = ctx.norm_after) {
      ns = load_values<T>(*na->scale), nb = load_values<T>(*na->bias), nm = load_values<T>(*na->mean),
      nv = load_values<T>(*na->var);
      norm = {ns.data(), nb.data(), nm.data(), nv.data(), static_cast<T>(static_cast<float>(na->epsilon))};
      finish.norm = &norm;
    }
    const ConvPath path = conv_path(cg, g);
    if (path != ConvPath::plane && transposed_product(cg * ks, m, os, group)) {
      if (const Tensor* kept = packed_weights<T>(ctx, vw, m, cg * ks)) {
        // Chunks of whole blocks of the packing, 256 rows or more.
        const int64_t depth = static_cast<int64_t>(kernels::gemm_packed_depth(vw));
        const int64_t chunk = std::min(cg * ks, (im2col_chunk(cg * ks) + depth - 1) / depth * depth);
        PooledScratch scratch(static_cast<size_t>(checked_buffer_numel({2 * chunk * os + m * os}, sizeof(T),
                                                                       "Conv's transposed product")) * sizeof(T));
        T* buffers = scratch.as<T>();
        const kernels::GemmPacked<T> packed{kept->data<T>(), static_cast<size_t>(cg * ks), static_cast<size_t>(m)};
        for (int64_t i = 0; i < n; ++i) {
          conv_transposed(vx + i * c * is, packed, y + i * m * os, cg, g, path == ConvPath::direct, chunk, buffers,
                          buffers + 2 * chunk * os, finish);
        }
        if (!own) store_values(out[0], y);
        return 0;
      }
    }
    // Uninitialized: im2col writes every element. One part per thread.
    const int64_t col_size =
        path != ConvPath::im2col
            ? 0
            : checked_buffer_numel({im2col_chunk(cg * ks), im2col_width(cg * ks, os)}, sizeof(T), "Conv's im2col buffer");
    const int64_t threads = omp_get_max_threads();
    PooledScratch col(col_size ? static_cast<size_t>(checked_buffer_numel({threads, col_size}, sizeof(T),
                                                                         "Conv's im2col buffers")) *
                                     sizeof(T)
                               : 0);
    if (path == ConvPath::plane) {
      // Images and groups (depthwise: one channel each) to OpenMP threads.
      const bool parallel = n * group > 1 && static_cast<double>(n * m * os) * static_cast<double>(ks) >= kParallelWork;
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t t = 0; t < n * group; ++t) {
        const int64_t i = t / group, gi = t % group;
        conv_plane_group(vx + (i * c + gi * cg) * is, vw + gi * mg * cg * ks, y + (i * m + gi * mg) * os, mg, g,
                         finish, gi * mg);
      }
    } else {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t gi = 0; gi < group; ++gi) {
          conv_gemm_group(vx + (i * c + gi * cg) * is, vw + gi * mg * cg * ks, y + (i * m + gi * mg) * os, cg, mg, g,
                          path == ConvPath::direct, col.as<T>(), col_size, finish, gi * mg);
        }
    }
    if (!own) store_values(out[0], y);
    return 0;
  });
  return out;
}

}  // namespace bnorm::eval

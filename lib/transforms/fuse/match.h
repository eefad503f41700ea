// Internal to fuse_norms.cpp and its matchers (fuse/*.cpp): what a
// matcher reads (one graph of the converted model, indexed with shapes
// inferred) and what it gives back (the decomposition to replace and the
// node replacing it, or why it is left alone). Matchers are pure: they
// read the index and return a Candidate; the driver rewrites.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "model/graph_index.h"
#include "model/tensor.h"

namespace bnorm::fuse {

// The identical nodes of one graph (find_copies): same op and domain, same
// attributes, and the same inputs (values made by copies count as one,
// constants of at most 16 elements are compared by value), among the ops
// the decompositions are made of. Each class of copies is one node to the
// matchers, and its outputs one value; when a decomposition is fused every
// copy goes (Graph::with_copies).
struct Fusion;

struct Copies {
  std::unordered_map<std::string, std::string> first;                        // a copy's output -> the first copy's
  std::unordered_map<std::string, std::vector<std::string>> values;          // the first's output -> every copy's
  std::unordered_map<const onnx::NodeProto*, std::vector<const onnx::NodeProto*>> nodes;  // a copy -> every copy
};
Copies find_copies(const GraphIndex& index, const GraphIndex::Scope& scope, const std::filesystem::path& dir);

// One graph of the model being fused, and what a matcher may ask of it.
// Every query sees the copies of a node (Copies) as that node and the
// values they make as one value.
struct Graph {
  const GraphIndex* index = nullptr;
  const GraphIndex::Scope* scope = nullptr;
  int64_t opset = 0;                                         // the model's (target) opset
  std::filesystem::path dir;                                 // external data of constants
  const std::unordered_set<const onnx::NodeProto*>* claimed = nullptr;  // nodes an earlier fusion takes
  std::unordered_set<std::string>* names = nullptr;          // every name in use; fresh() adds
  const Copies* copies = nullptr;                            // identical nodes (none when null)

  // `a` and `b` are one value: the same name, or made by copies.
  bool same(const std::string& a, const std::string& b) const;
  // The names of `v`'s value: `v` and the outputs of the copies of its producer.
  std::vector<std::string> names_of(const std::string& v) const;
  // `n` and its copies, in graph order.
  std::vector<const onnx::NodeProto*> copies_of(const onnx::NodeProto* n) const;
  // `n` is the first of its copies (or has none): a matcher anchors there only.
  bool first_copy(const onnx::NodeProto& n) const { return copies_of(&n).front() == &n; }

  // The default-domain node of this graph producing `v` with op `op` (any op when empty); nullptr otherwise.
  // consumers and sole_consumer give the first of a node's copies.
  const onnx::NodeProto* producer(const std::string& v, const std::string& op = "") const;
  // The distinct nodes of this graph reading `v` (readers in subgraphs are not listed; only_read_by sees them).
  std::vector<const onnx::NodeProto*> consumers(const std::string& v) const;
  // `v` is read only by `nodes` (and is no graph output).
  bool only_read_by(const std::string& v, const std::vector<const onnx::NodeProto*>& nodes) const;
  // The one node reading `v` when it is a default-domain `op` and `v` is no graph output; nullptr otherwise.
  const onnx::NodeProto* sole_consumer(const std::string& v, const std::string& op) const;
  bool is_claimed(const onnx::NodeProto* n) const { return claimed && claimed->count(n); }

  // The copies of the removed nodes added to `f.nodes` (each after its first); why not, or "", when the
  // fused node reads a value a removed node makes, or such a value is read outside them and is not an
  // output of the fused node.
  std::string with_copies(Fusion& f) const;

  // A constant's data (initializer, Constant node, or computed by Identity/ConstantOfShape).
  std::optional<Tensor> constant(const std::string& v) const;
  // The single value of a one-element constant; nullopt when `v` is not one.
  std::optional<double> scalar(const std::string& v) const;
  // The same of a one-element constant of any numeric type (an exponent); nullopt when `v` is not one.
  std::optional<double> number(const std::string& v) const;
  // Element type (0: unknown), dims (-1 where unknown) and rank from declared or inferred types.
  int32_t elem_type(const std::string& v) const;
  std::optional<std::vector<int64_t>> dims(const std::string& v) const;
  std::optional<int64_t> rank(const std::string& v) const;

  std::string fresh(const std::string& stem) const;
};

// A decomposition to replace, as the matcher found it.
struct Fusion {
  std::vector<const onnx::NodeProto*> nodes;  // removed (in chain order)
  onnx::NodeProto node;                       // the fused node: op, inputs, outputs, attributes (name set by the driver)
  std::vector<onnx::TensorProto> initializers;  // new constants it reads (ones Scale, per-channel parameters)
  std::string detail;                         // "axis -1, epsilon 1e-05"
};

// What a matcher says about an anchor it recognised: a fusion, or why not.
struct Candidate {
  std::string op;                             // the op it would fuse into
  int64_t since = 0;                          // the opset that op needs
  const onnx::NodeProto* anchor = nullptr;    // named in the report
  std::optional<Fusion> fusion;
  std::string why;                            // when there is no fusion
};

// Y = (x - mean) / sqrt(var + eps) over the trailing axes, as exporters
// write it, found from its first ReduceMean (standardize.cpp):
//   Mean = ReduceMean(x, axes, keepdims 1); D = Sub(x, Mean);
//   then the root-mean-square tail of D (below).
// And the root-mean-square tail alone (RMSNormalization's core), from the square:
//   Sq = Pow(v, 2) | Mul(v, v); M = ReduceMean(Sq, axes, keepdims 1); E = Add(M, eps) | Add(eps, M);
//   S = Sqrt(E); N = Div(v, S) | Mul(v, I) | Mul(v, Mul(I, scale))  with I = Reciprocal(S) | Div(1, S)
// (Mul operands either way round). Not: Add(Sqrt(M), eps) (epsilon after
// the root is another formula), Pow(v, e) with e != 2, Div(w, S) for a w
// that is neither v nor 1.
struct Standardize {
  std::string x;                              // the value normalized (after a head Cast, if any)
  const onnx::NodeProto* mean = nullptr;      // ReduceMean (LayerNormalization's core only)
  const onnx::NodeProto* sub = nullptr;
  const onnx::NodeProto* square = nullptr;
  const onnx::NodeProto* var = nullptr;       // the ReduceMean of the square
  const onnx::NodeProto* add_eps = nullptr;
  const onnx::NodeProto* sqrt = nullptr;
  const onnx::NodeProto* inverse = nullptr;   // I = Reciprocal(S) | Div(1, S), when N = Mul(v, ..)
  const onnx::NodeProto* scale_mul = nullptr; // Mul(I, scale), when N = Mul(v, Mul(I, scale))
  std::string scale;                          // its scale (the matcher checks its shape)
  const onnx::NodeProto* divide = nullptr;    // the Div or Mul making N
  int64_t count = 0;                          // how many trailing axes
  double epsilon = 0;
  std::vector<const onnx::NodeProto*> nodes() const;  // those present, in chain order
  const onnx::NodeProto* inverse_reader() const { return scale_mul ? scale_mul : divide; }
  std::string out() const { return divide->output(0); }
};

// The trailing-axes count of `axes` (given as written) for a value of
// rank `rank` (nullopt: unknown), or why they are not trailing axes.
std::optional<int64_t> trailing_count(std::vector<int64_t> axes, std::optional<int64_t> rank, std::string& why);
// A ReduceMean's axes (attribute below 18, constant input from 18; none:
// every axis), or why they cannot be read; keepdims must be 1.
std::optional<std::vector<int64_t>> mean_axes(const Graph& g, const onnx::NodeProto& rm, std::string& why);
// `n` squares a value (Pow(v, 2), the 2 of any numeric type, or Mul(v, v)): that value.
std::optional<std::string> squared(const Graph& g, const onnx::NodeProto& n);
// `n` is Pow(v, e) with a constant e other than 2: e (the near miss of a square); nullopt otherwise.
std::optional<double> other_power(const Graph& g, const onnx::NodeProto& n);

// Anchored at `mean` when a Sub(x, mean) reads it; nullopt otherwise.
// `extra_outputs`: Mean and I (1 / S) may have other readers
// (LayerNormalization's optional outputs), else they must not.
// On failure `why` is set and the result has no value.
struct StandardizeMatch {
  bool anchored = false;
  std::optional<Standardize> s;
  std::string why;
};
StandardizeMatch match_standardize(const Graph& g, const onnx::NodeProto& mean, bool extra_outputs);
// The tail from `square` (squaring `v`) on; `s.x` = v.
StandardizeMatch match_rms_tail(const Graph& g, const onnx::NodeProto& square, const std::string& v, bool extra_outputs);

// A head Cast to float around x: x = Cast(X, to float), and the normalized
// value cast back to X's type. `x_in` is what the fused op reads.
struct CastFrame {
  const onnx::NodeProto* head = nullptr;      // Cast(X) -> x; nullptr when x is X itself
  const onnx::NodeProto* tail = nullptr;      // Cast(N) -> X's type
  bool remove_head = false;                   // its output has no reader outside the decomposition
  std::string x_in;
};
// Checks the precision: without a head Cast X must be float (the fused
// ops compute their statistics in float, stash_type 1); with one, the
// Cast is to float and N is cast back to X's type. Returns why not, or "".
std::string cast_frame(const Graph& g, const Standardize& s, const std::vector<const onnx::NodeProto*>& inside,
                       CastFrame& f);

// `v` * scale / + bias after the normalized value: the Mul (Add) alone
// reading `v`, whose other operand has a known shape that spans only the
// last `count` axes of X (or broadcasts as 1 before them). nullptr when
// there is none fitting (the chain then ends before it).
// The scale of the standardization `s` of `x` (of `count` axes), whose
// normalized value is `y`: `s.scale` (applied to 1 / S), checked as
// spans_normalized; else the Mul after `y` (affine_after), returned; nullptr
// and `scale` empty when there is none; `why` set when s.scale does not fit.
const onnx::NodeProto* scale_of(const Graph& g, const Standardize& s, const std::string& y, const std::string& x,
                                std::string& scale, std::string& why);
// `operand` (a Scale or B) has a known shape that spans only the last
// `count` axes of `x` (each dim x's or 1, leading ones) and x's type.
bool spans_normalized(const Graph& g, const std::string& operand, const std::string& x, int64_t count);
const onnx::NodeProto* affine_after(const Graph& g, const std::string& v, const std::string& op, const std::string& x,
                                    int64_t count, std::string& operand);

// Ones of the normalized shape (the last `count` dims of `x`, which must be
// known) of `x`'s type, as a new initializer; nullopt when the dims are unknown.
std::optional<onnx::TensorProto> ones_of_normalized_shape(const Graph& g, const std::string& x, int64_t count,
                                                          const std::string& stem);

// `n` is a default-domain node of op `op` (any op when empty).
bool is_op(const onnx::NodeProto& n, const std::string& op);

std::string op_list(const std::vector<const onnx::NodeProto*>& nodes);  // "ReduceMean, Sub, Pow, ..."
std::string float_text(double v);                                       // shortest round-trip text
std::string ints_text(const std::vector<int64_t>& v);                  // "[-1, 2]"

// The matchers (layernorm.cpp, rmsnorm.cpp, groupnorm.cpp):
// nullopt when the node anchors no decomposition of theirs.
std::optional<Candidate> match_layernorm(const Graph& g, const onnx::NodeProto& reduce_mean);
std::optional<Candidate> match_rmsnorm(const Graph& g, const onnx::NodeProto& reduce_mean);
std::optional<Candidate> match_groupnorm(const Graph& g, const onnx::NodeProto& reshape);

}  // namespace bnorm::fuse

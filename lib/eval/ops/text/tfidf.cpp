// TfIdfVectorizer (9): n-gram counts of integer sequences, weighted.
//
//   X [C] or [N, C], int32/int64 -> Y [max(ngram_indexes) + 1] or [N, that], float.
//   For each n in [min_gram_length, max_gram_length] and each skip s in
//   [0, max_skip_count] (1-grams once: a skip does not change them), the
//   n-grams of a row are X[i], X[i + s + 1], ..., X[i + (n - 1)(s + 1)].
//   Pool: pool_int64s holds the n-grams grouped by n, the n-grams of length n
//   starting at element ngram_counts[n - 1]; the k-th n-gram of the pool
//   (across every n) counts into Y[ngram_indexes[k]]. Mode TF: the counts;
//   IDF: min(count, 1) * weights[k]; TFIDF: count * weights[k] (weights
//   default to 1). N-grams not in the pool are ignored. String pools and
//   inputs are refused (bnorm holds no strings).
#include <algorithm>
#include <map>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/text/ops.h"

namespace bnorm::eval {

namespace {

struct Pool {
  std::map<std::vector<int64_t>, int64_t> index;  // n-gram -> pool position k
  int64_t out_size = 0;
};

Pool read_pool(const onnx::NodeProto& node, int64_t min_n, int64_t max_n) {
  if (find_attr(node, "pool_strings")) fail(ErrorKind::unsupported, "pool_strings: bnorm eval holds no strings");
  const auto pool = attr_ints(node, "pool_int64s");
  const auto counts = attr_ints(node, "ngram_counts");
  const auto indexes = attr_ints(node, "ngram_indexes");
  if (!pool || !counts || !indexes) fail(ErrorKind::input, "pool_int64s, ngram_counts and ngram_indexes are required");
  Pool p;
  int64_t k = 0;
  for (size_t g = 0; g < counts->size(); ++g) {
    const int64_t n = static_cast<int64_t>(g) + 1;
    const int64_t begin = (*counts)[g];
    const int64_t end = g + 1 < counts->size() ? (*counts)[g + 1] : static_cast<int64_t>(pool->size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool->size()) || (end - begin) % n != 0) {
      fail(ErrorKind::input, "ngram_counts [{}] does not split pool_int64s ({} values) into {}-grams", g, pool->size(), n);
    }
    for (int64_t at = begin; at < end; at += n, ++k) {
      if (k >= static_cast<int64_t>(indexes->size())) fail(ErrorKind::input, "ngram_indexes is shorter than the pool");
      const int64_t out = (*indexes)[k];
      if (out < 0) fail(ErrorKind::input, "ngram_indexes holds a negative index {}", out);
      p.out_size = std::max(p.out_size, out + 1);
      if (n >= min_n && n <= max_n) p.index.emplace(std::vector<int64_t>(pool->begin() + at, pool->begin() + at + n), k);
    }
  }
  if (k != static_cast<int64_t>(indexes->size())) {
    fail(ErrorKind::input, "ngram_indexes has {} entries for {} n-grams in the pool", indexes->size(), k);
  }
  return p;
}

}  // namespace

Tensors op_tfidf_vectorizer(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "X");
  if (x.dtype != DType::int32 && x.dtype != DType::int64) {
    fail(ErrorKind::unsupported, "X of type {}: bnorm eval takes int32 or int64 (no strings)", dtype_name(x.dtype));
  }
  if (x.dims.size() != 1 && x.dims.size() != 2) fail(ErrorKind::input, "X has rank {}, expected 1 or 2", x.dims.size());
  const auto& node = *ctx.node;
  const int64_t min_n = attr_int(node, "min_gram_length", 0), max_n = attr_int(node, "max_gram_length", 0);
  const int64_t max_skip = attr_int(node, "max_skip_count", -1);
  if (min_n < 1 || max_n < min_n || max_skip < 0) {
    fail(ErrorKind::input, "min_gram_length {}, max_gram_length {}, max_skip_count {}: need 1 <= min <= max, skip >= 0",
         min_n, max_n, max_skip);
  }
  const std::string mode = attr_string(node, "mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") fail(ErrorKind::input, "mode '{}' is not TF, IDF or TFIDF", mode);
  const Pool pool = read_pool(node, min_n, max_n);
  const auto weights = attr_floats(node, "weights");
  if (weights && !weights->empty() && weights->size() != attr_ints(node, "ngram_indexes")->size()) {
    fail(ErrorKind::input, "weights has {} values for {} n-grams", weights->size(), attr_ints(node, "ngram_indexes")->size());
  }
  const auto indexes = *attr_ints(node, "ngram_indexes");
  const int64_t rows = x.dims.size() == 2 ? x.dims[0] : 1;
  const int64_t len = x.dims.back();
  const std::vector<int64_t> v = load_values<int64_t>(x);
  Tensor y(DType::float32, x.dims.size() == 2 ? std::vector<int64_t>{rows, pool.out_size} : std::vector<int64_t>{pool.out_size});
  float* out = y.data<float>();
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = v.data() + r * len;
    std::vector<int64_t> counts(indexes.size(), 0);
    for (int64_t n = min_n; n <= max_n; ++n) {
      for (int64_t s = 0; s <= (n == 1 ? 0 : max_skip); ++s) {
        const int64_t span = (n - 1) * (s + 1);
        for (int64_t i = 0; i + span < len; ++i) {
          gram.clear();
          for (int64_t j = 0; j < n; ++j) gram.push_back(row[i + j * (s + 1)]);
          auto it = pool.index.find(gram);
          if (it != pool.index.end()) ++counts[static_cast<size_t>(it->second)];
        }
      }
    }
    for (size_t k = 0; k < counts.size(); ++k) {
      if (!counts[k]) continue;
      const double w = weights && !weights->empty() ? (*weights)[k] : 1.0;
      const double c = mode == "TF" ? static_cast<double>(counts[k]) : mode == "IDF" ? w : static_cast<double>(counts[k]) * w;
      out[r * pool.out_size + indexes[k]] = static_cast<float>(c);
    }
  }
  return one_tensor(std::move(y));
}


}  // namespace bnorm::eval

// The versions of text (TfIdfVectorizer) bnorm implements: one row per behaviour, each a closed range of the
// op's since-versions (run/op.h; run/op_table_test.cpp checks every row of every family).
#include "eval/ops/text/ops.h"
#include "eval/run/families.h"

namespace bnorm::eval {

void add_text_ops(OpRegistry& r) {
  r.add("TfIdfVectorizer", 9, 9, op_tfidf_vectorizer);
}

}  // namespace bnorm::eval

// The op functions of text (TfIdfVectorizer, on integer n-grams; their versions are the rows of register.cpp).
#pragma once

#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_tfidf_vectorizer(const OpContext& ctx);

}  // namespace bnorm::eval

// fold: folds inference BatchNormalization into the Conv, ConvTranspose,
// Gemm or MatMul that produces its input (the rewrite half; fold_match.h
// is the match half and holds the contract: Before/After, preconditions,
// formula).
//
// The arithmetic is float64 on the stored values, rounded once to each
// tensor's type. The producer takes over the BN's output name, so
// consumers and graph outputs are untouched; the BN node is removed.
// Weights used only by the folded producer are rewritten in place (same
// name, same position); shared weights and Constant-node weights get a new
// initializer per producer. Initializers and Constant nodes that only the
// folded nodes used, and their graph-input entries, are removed. Nothing
// else in the model changes.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"

namespace bnorm {

struct FoldReport {
  // bn and producer are node names as written (possibly empty); the labels
  // (model/node_label.h) name every node, and bn_index is the BN's position
  // in its graph.
  struct Folded {
    std::string graph, bn, producer, producer_op;
    std::string output;  // the BN's output name, which the folded producer now makes
    std::string bn_label, producer_label;
    int bn_index = -1;
  };
  struct Skipped {
    std::string graph, bn, reason;
    std::string bn_label;
    int bn_index = -1;
  };
  int total = 0;  // BatchNormalization nodes seen, in every graph
  std::vector<Folded> folded;
  std::vector<Skipped> skipped;
  // Folds whose input_var holds NaN or values with var + epsilon <= 0: valid,
  // folded per IEEE (NaN or infinite weights there), each named here by
  // its label: "node 'bn1': ...".
  std::vector<std::string> warnings;
};

struct FoldOptions {
  // A weight whose bytes are not in memory (deferred.h, or external data)
  // is rescaled while the model is saved (Model::rewrites), one tensor at a
  // time, instead of in memory now. Readers of the folded model before the
  // save must decode through decode_as_saved (verify_folds does).
  bool rewrite_on_save = false;
};

FoldReport fold_batch_norms(Model& model, const FoldOptions& options = {});

}  // namespace bnorm

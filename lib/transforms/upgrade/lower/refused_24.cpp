// The ops of opsets 24..28 that bnorm does not write as older ops, each
// with why (docs/upgrade.md, "Lowering"; docs/semantics.md for CumProd).
// A row of the lowering table (lower_pass.cpp) names this function, so
// that going below the op's opset the error says why rather than only that
// the op does not exist yet:
//
//   CumProd-26              Exp(CumSum(Log(x))) is not exact (each Log and Exp rounds, so an
//                           integer product comes back off by units) and needs Log of zeros and
//                           negatives; no other op of opsets <= 25 accumulates a product
//   BitCast-26              no op before 26 reinterprets bits: Cast converts values
// (CausalConvWithState-27 and LinearAttention-27 are lowered: causalconv_27.cpp, linear_attention_27.cpp.)
//
// Before: the node. After: nothing; Error(unsupported) naming the node.
#include "transforms/upgrade/lower/lower.h"

namespace bnorm::steps {

void lower_refused_24(NormSite& s, int64_t) {
  const std::string& op = s.node.op_type();
  if (op == "CumProd") {
    refuse(s, "no exact form: Exp(CumSum(Log(x))) rounds at each Log and Exp (integer products come back off by "
              "units) and Log has no value at zero or below; no op before 26 accumulates a product");
  }
  refuse(s, "no op before opset 26 reinterprets bits (Cast converts values)");  // BitCast
}

}  // namespace bnorm::steps

// OptionalHasElement 15 <-> 18: the input became optional (no input: false).
//
//   OptionalHasElement-15: OptionalHasElement(input)    -> output
//   OptionalHasElement-18: OptionalHasElement(input?)   -> output (false without one)
//
// Up: nothing changes. Down: a node without an input (or with an empty
// name) is refused, naming it: version 15 requires the input. Formula:
// unchanged.
#include "transforms/upgrade/steps/step.h"

namespace bnorm::steps {

namespace {

void up(NormSite&) {}

void down(NormSite& s) {
  if (s.node.input_size() == 0 || s.node.input(0).empty()) {
    refuse(s, "OptionalHasElement without an input (false) has no form below version 18, where the input is required");
  }
}

}  // namespace

const Step optional_has_element_18{"optional_has_element_18", "optional_has_element_18", up, down};

}  // namespace bnorm::steps

// bnorm::Tensor is part of the public API: include/bnorm/tensor.h.
#pragma once

#include <bnorm/tensor.h>

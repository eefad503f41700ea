// bnorm's public API, all of it (docs/api.md): models in and out, inspect,
// fold, upgrade, run and compare, errors. Link bnorm::bnorm
// (find_package(bnorm)).
#pragma once

#include <bnorm/error.h>
#include <bnorm/eval.h>
#include <bnorm/fold.h>
#include <bnorm/inspect.h>
#include <bnorm/interrupt.h>
#include <bnorm/model.h>
#include <bnorm/report.h>
#include <bnorm/tensor.h>
#include <bnorm/upgrade.h>

namespace bnorm::api {

// bnorm's version ("0.1.0").
const char* version();

}  // namespace bnorm::api

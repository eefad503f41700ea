# Fails when a layer includes a header from a layer above it, when the
# kernels or core include protobuf / ONNX, when the Python module includes
# anything of the library's but its public API, or when, inside a layer, a file
# includes a header of a level above its own (the wings of transforms and
# the executor and families of eval: docs/architecture.md).
# Run as: cmake -DSRC=<repo> -P layering.cmake
set(forbidden_core     "onnx/|google/protobuf|\"model/|\"eval/|\"transforms/|\"kernels/|<bnorm/(model|inspect|fold|upgrade|eval|bnorm)\\.h>")
set(forbidden_kernels  "onnx/|google/protobuf|\"model/|\"eval/|\"transforms/|\"core/|spdlog|<bnorm/")
set(forbidden_model    "\"eval/|\"transforms/|\"api/|<bnorm/(inspect|fold|upgrade|eval|bnorm|report)\\.h>")
set(forbidden_eval     "\"transforms/|\"api/|<bnorm/(inspect|fold|upgrade|eval|bnorm|report)\\.h>")
set(forbidden_transforms "\"api/|<bnorm/(inspect|fold|upgrade|eval|bnorm|report)\\.h>")
set(forbidden_api "^$")

# Levels inside a layer: "files (a path regex under lib/)|what they must not include".
set(up "\"transforms/upgrade/")
set(levels
  # eval: the op contract < the op families < the executor < reports, the folder runner
  "eval/run/(op|numeric|op_helpers|families)\\.(h|cpp)$|\"eval/(ops|report|backend)/|\"eval/run/(evaluator|random_inputs|input_rules)\\.h"
  "eval/ops/|\"eval/(report|backend)/|\"eval/run/(evaluator|random_inputs|input_rules)\\.h"
  "eval/run/|\"eval/(report|backend)/"
  # fold, fuse and upgrade are wings of their own: fold sees neither other wing
  "transforms/fold/|\"transforms/(upgrade|fuse)/"
  # upgrade: shared types, tables and steps < the passes < the node plan < upgrade_model < preflight, verify
  "transforms/upgrade/(types|ir_types|attr_blockers|structure|versions|schema|value_info|plan)\\.(h|cpp)$|${up}(upgrade|preflight|node_plan|verify|lower_pass|bf16_pass|onnx_converter|restore|high)\\.h|\"transforms/fuse/"
  "transforms/upgrade/(steps|lower)/|${up}(upgrade|preflight|node_plan|verify|lower_pass|bf16_pass|onnx_converter|restore|high)\\.h|\"transforms/fuse/"
  "transforms/upgrade/(lower_pass|bf16_pass|onnx_converter|onnx_run|type_only|restore|high)\\.(h|cpp)$|${up}(upgrade|preflight|node_plan|verify)\\.h|\"transforms/fuse/"
  "transforms/fuse/|${up}(upgrade|preflight|node_plan|verify|lower_pass|bf16_pass|onnx_converter|restore|high)\\.h"
  "transforms/upgrade/node_plan\\.(h|cpp)$|${up}(upgrade|preflight|verify)\\.h"
  "transforms/upgrade/(upgrade|check)\\.(h|cpp)$|${up}(preflight|verify)\\.h"
)

set(bad "")
foreach(layer core kernels model eval transforms api)
  file(GLOB_RECURSE files ${SRC}/lib/${layer}/*.h ${SRC}/lib/${layer}/*.cpp ${SRC}/lib/${layer}/*.inc)
  foreach(f ${files})
    if(f MATCHES "_test\\.cpp$")
      continue()
    endif()
    file(RELATIVE_PATH rel ${SRC}/lib ${f})
    file(STRINGS ${f} lines REGEX "^#include")
    foreach(l ${lines})
      if(l MATCHES "${forbidden_${layer}}")
        string(APPEND bad "lib/${rel}: ${l} (a layer above ${layer})\n")
      endif()
      foreach(rule ${levels})
        string(FIND "${rule}" "|\"" cut)
        string(SUBSTRING "${rule}" 0 ${cut} who)
        math(EXPR from "${cut} + 1")
        string(SUBSTRING "${rule}" ${from} -1 what)
        if(rel MATCHES "^${who}" AND l MATCHES "${what}")
          string(APPEND bad "lib/${rel}: ${l} (a level above its own in ${layer})\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
# The public headers hold the API only: no internal header of the library.
file(GLOB public ${SRC}/include/bnorm/*.h)
foreach(f ${public})
  file(STRINGS ${f} lines REGEX "^#include")
  foreach(l ${lines})
    if(l MATCHES "#include \"|onnx/|google/protobuf|fmt/|spdlog")
      string(APPEND bad "${f}: ${l} (the public API includes only <bnorm/...> and the standard library)\n")
    endif()
  endforeach()
endforeach()
# The Python module is a user of the public API, as the CLI's commands are
# of the API: no header of the library's own, no protobuf or ONNX (models
# cross as bytes). spdlog is the public logger "bnorm" (docs/api.md).
file(GLOB python ${SRC}/python/*.cpp ${SRC}/python/*.h)
foreach(f ${python})
  file(STRINGS ${f} lines REGEX "^#include")
  foreach(l ${lines})
    if(l MATCHES "#include \"(core|kernels|model|eval|transforms|api)/|onnx/|google/protobuf")
      string(APPEND bad "${f}: ${l} (the Python module is built on the public API alone)\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "layering violations:\n${bad}")
endif()
message(STATUS "layering: ok")

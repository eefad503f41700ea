# install bnorm into a prefix, build the example of docs/api.md against it
# (only the installed public headers are there: the internal ones are not
# installed), run it on testdata/demo_opset6.onnx and check what it did;
# then, when the build has the Python module (PYTHON_DIR, relative to the
# prefix), import it from the prefix and fold the same model with it.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
if(NOT EXISTS ${WORK}/prefix/bin/bnorm)
  message(FATAL_ERROR "the CLI was not installed")
endif()
# Only the public API is installed.
file(GLOB_RECURSE headers RELATIVE ${WORK}/prefix/include ${WORK}/prefix/include/*)
file(GLOB public RELATIVE ${SRC}/include ${SRC}/include/bnorm/*.h)
list(SORT headers)
list(SORT public)
if(NOT headers STREQUAL public)
  message(FATAL_ERROR "installed headers: ${headers}\nthe public ones: ${public}")
endif()
# The example: the one ```cpp block of docs/api.md.
file(READ ${SRC}/docs/api.md doc)
string(FIND "${doc}" "```cpp\n" start)
if(start EQUAL -1)
  message(FATAL_ERROR "docs/api.md has no cpp block")
endif()
math(EXPR start "${start} + 7")
string(SUBSTRING "${doc}" ${start} -1 rest)
string(FIND "${rest}" "```" end)
string(SUBSTRING "${rest}" 0 ${end} example)
file(WRITE ${WORK}/main.cpp "${example}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/tests/consumer -B ${WORK}/build
                -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release -DCONSUMER_MAIN=${WORK}/main.cpp
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed")
endif()
execute_process(COMMAND ${WORK}/build/consumer ${SRC}/testdata/demo_opset6.onnx ${WORK}/folded.onnx
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(rc)
  message(FATAL_ERROR "the consumer failed (exit ${rc})")
endif()
foreach(want "folded 3 of 3 BatchNormalization nodes" "logits: max abs" "1 output(s); the model is at opset 6"
        "wrote ${WORK}/folded.onnx")
  string(FIND "${out}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the consumer's output lacks '${want}'")
  endif()
endforeach()
if(NOT EXISTS ${WORK}/folded.onnx)
  message(FATAL_ERROR "no folded model")
endif()

if(PYTHON_DIR)
  set(site ${WORK}/prefix/${PYTHON_DIR})
  foreach(f __init__.py __init__.pyi _errors.py _tensors.py py.typed)
    if(NOT EXISTS ${site}/bnorm/${f})
      message(FATAL_ERROR "the Python package was not installed: no ${site}/bnorm/${f}")
    endif()
  endforeach()
  # From the prefix, not the build: a folder of its own as the working
  # directory, and PYTHONPATH the installed site-packages only.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} -c
      "import sys, bnorm; assert bnorm.__file__.startswith(sys.argv[1]), bnorm.__file__; m, r = bnorm.fold(sys.argv[2]); print(len(r['folded']), 'folded by', bnorm.__file__)"
      ${site} ${SRC}/testdata/demo_opset6.onnx
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}${err}")
  if(rc OR NOT out MATCHES "^3 folded by ")
    message(FATAL_ERROR "the installed Python module did not fold the model (exit ${rc})")
  endif()
endif()

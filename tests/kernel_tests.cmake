# The kernels' tests (lib/kernels/*_test.cpp) as an executable of their own,
# linked with the kernel layer only: no protobuf, no ONNX, nothing but
# OpenMP and Catch2. So they also build with a cross compiler and run under
# emulation (make test-aarch64-kernels, cmake/aarch64-kernels.cmake).
file(GLOB kernel_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/lib/kernels/*_test.cpp)
add_executable(bnorm_kernel_tests ${CMAKE_CURRENT_LIST_DIR}/kernel_main.cpp ${kernel_tests})
target_link_libraries(bnorm_kernel_tests PRIVATE bnorm_kernels Catch2::Catch2)
target_include_directories(bnorm_kernel_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(bnorm_kernel_tests PRIVATE -O1)
catch_discover_tests(bnorm_kernel_tests
  EXTRA_ARGS --warn NoTests
  PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")

// The kernels' test executable (kernel_tests.cmake).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

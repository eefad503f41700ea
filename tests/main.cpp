#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <csignal>

int main(int argc, char** argv) {
  // Tests feed stdin to children that may stop reading early (an error):
  // the write then fails with EPIPE instead of killing the test run.
  std::signal(SIGPIPE, SIG_IGN);
  return Catch::Session().run(argc, argv);
}

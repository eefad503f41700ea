# bnorm: the commands of the README, and the ones around them.
#   make demo            install what the build needs, build the bnorm binary only (Release), run the demo
#   make test            install what the tests need, build everything (Release), run every test through
#                        ctest, then a fuzz smoke run: every fuzz target (clang, ASan+UBSan) replays its seeds
#                        and regression inputs, then fuzzes FUZZ_SMOKE_SECONDS from a fixed seed, two at a time
#   make test-sanitize   the whole ctest suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer
#                        (g++, in build-sanitize; any report fails the test)
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (clang-14, in build-fuzz):
#                        make fuzz FUZZ_SECONDS=600
#   make test-aarch64-kernels   the kernel layer and its tests cross-compiled for aarch64 (g++-aarch64-linux-gnu)
#                        and run under qemu-user (not part of CI)
#   make install         the binary, its man page and bash completion, the library and its CMake package, and
#                        the Python module (`import bnorm`) into the prefix's site-packages when pybind11 is
#                        there (PREFIX=/usr/local by default: make install PREFIX=$HOME/.local; docs/python.md)
# docs/reliability.md has the fuzz targets, corpora, limits and findings; docs/performance.md the build times.
BUILD      ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
PREFIX     ?= /usr/local

SANITIZE_BUILD     ?= build-sanitize
FUZZ_BUILD         ?= build-fuzz
FUZZ_SECONDS       ?= 180
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_PARALLEL      ?= 2
# Every report is fatal (abort: no exit code 1 or 2 to mistake for bnorm's) and names its stack.
SANITIZER_ENV = ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1

AARCH64_BUILD ?= build-aarch64

.PHONY: all deps configure build build-bnorm demo test test-sanitize fuzz fuzz-smoke fuzz-build install clean \
  test-aarch64-kernels

all: build

deps:
	@bash scripts/install-deps.sh test

# The binary alone, for the demo: no test packages, no test targets. A
# build folder configured before (by make test) keeps its options.
build-bnorm:
	@bash scripts/install-deps.sh build
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DBNORM_TESTS=OFF -DBNORM_BENCH=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target bnorm_cli

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DBNORM_TESTS=ON -DBNORM_BENCH=ON $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build-bnorm
	@bash scripts/demo.sh $(BUILD)/bnorm

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz-smoke

test-sanitize: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBNORM_SANITIZE=ON -DBNORM_BENCH=OFF >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	@cd $(SANITIZE_BUILD) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS)

fuzz-build: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DBNORM_SANITIZE=ON -DBNORM_FUZZ=ON -DBNORM_TESTS=OFF -DBNORM_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets

fuzz: fuzz-build
	@$(SANITIZER_ENV) bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_PARALLEL)

fuzz-smoke: fuzz-build
	@$(SANITIZER_ENV) bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(FUZZ_PARALLEL) --smoke

test-aarch64-kernels:
	@bash scripts/install-deps.sh aarch64
	@cmake -S . -B $(AARCH64_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DBNORM_KERNELS_ONLY=ON \
	  -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(AARCH64_BUILD) -j $(JOBS)
	@cd $(AARCH64_BUILD) && ctest --output-on-failure -j $(JOBS)

install:
	@bash scripts/install-deps.sh install
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DBNORM_TESTS=OFF -DBNORM_BENCH=OFF $(CMAKE_ARGS) >/dev/null
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target bnorm_cli bnorm_man bnorm_completion bnorm_python
	@cmake --install $(BUILD)

clean:
	@rm -rf $(BUILD) $(SANITIZE_BUILD) $(FUZZ_BUILD) $(AARCH64_BUILD)

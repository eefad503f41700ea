# bnorm: the two commands of the README, and the ones around them.
#   make demo            install what is missing, build (Release), run the demo
#   make test            install what is missing, build (Release), run every test through ctest,
#                        then a fuzz smoke run: every fuzz target (clang, ASan+UBSan) replays its seeds and
#                        regression inputs, then fuzzes FUZZ_SMOKE_SECONDS from a fixed seed, two at a time
#   make test-sanitize   the whole ctest suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer
#                        (g++, in build-sanitize; any report fails the test)
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (clang-14, in build-fuzz):
#                        make fuzz FUZZ_SECONDS=600
# docs/reliability.md has the fuzz targets, corpora, limits and findings.
BUILD      ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

SANITIZE_BUILD     ?= build-sanitize
FUZZ_BUILD         ?= build-fuzz
FUZZ_SECONDS       ?= 180
FUZZ_SMOKE_SECONDS ?= 60
FUZZ_PARALLEL      ?= 2
# Every report is fatal (abort: no exit code 1 or 2 to mistake for bnorm's) and names its stack.
SANITIZER_ENV = ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1

.PHONY: all deps configure build demo test test-sanitize fuzz fuzz-smoke fuzz-build install clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
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

install: build
	@cmake --install $(BUILD)

clean:
	@rm -rf $(BUILD) $(SANITIZE_BUILD) $(FUZZ_BUILD)

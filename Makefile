# clustersim: the two commands are `make demo` and `make test` (see README.md).
BUILD   ?= build
SANBUILD ?= build-san
JOBS    ?= $(shell nproc)
PYTHON  := /usr/bin/python3
FLAGSHIP := scenarios/fat_tree_allreduce.json
FUZZ_SECONDS ?= 30
# The tests run under an address-space limit (every process they start inherits it): an input
# that would take the machine's memory must be refused before it is spent, never found by
# swapping. 8 GB: ctest and tests/python pass under it (checked; the sanitizer run, whose
# shadow memory reserves terabytes of address space, is left without).
MEMLIMIT ?= prlimit --as=8000000000

CMAKE_ARGS ?=
# ccache, where a developer has it (CI does not install it): rebuilds and other worktrees of
# the same sources reuse objects.
ifneq ($(shell command -v ccache 2>/dev/null),)
  CMAKE_ARGS += -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR := $(CURDIR)
endif
# Warnings are errors in every build made through this Makefile, as in CI: a warning found
# only by CI is a failed landing. (cmake by hand: -DCLUSTERSIM_WERROR=OFF is the default.)
CMAKE_ARGS += -DCLUSTERSIM_WERROR=ON

.PHONY: setup build demo test check-includes test-cpp test-python sanitize fuzz bench bench-baseline golden clean

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DPython_EXECUTABLE=$(PYTHON) $(CMAKE_ARGS) > $(BUILD)-configure.log || (cat $(BUILD)-configure.log; exit 1)
	@cmake --build $(BUILD) -j $(JOBS)

# Set-up + build + the flagship scenario.
demo: build
	$(BUILD)/clustersim run $(FLAGSHIP)

# Set-up + every test: the include edges against docs/dependencies.md, C++ (ctest), Python
# (pytest on $(JOBS) workers, pytest-xdist: CLI, scenarios, notebooks; --dist loadgroup keeps
# the tests sharing the training validation replay on one worker), then the sanitizer
# build of the C++ tests and a short fuzzing run of the scenario loader.
test: build
	$(MAKE) --no-print-directory check-includes test-cpp test-python sanitize fuzz

check-includes:
	$(PYTHON) scripts/check_includes.py

test-cpp:
	$(MEMLIMIT) ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python:
	CLUSTERSIM_REQUIRE_PEERS=1 PYTHONPATH=$(BUILD)/python CLUSTERSIM_BUILD=$(abspath $(BUILD)) $(MEMLIMIT) $(PYTHON) -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadgroup tests/python

# ASan + UBSan build of the C++ tests (clang, which also builds the libFuzzer target). The
# test cases tagged [heavy] (large sizes or sample counts, tests/CMakeLists.txt) run in the
# Release ctest only: under the sanitizers a smaller case covers the same code.
sanitize: setup
	@CC=clang CXX=clang++ cmake -S . -B $(SANBUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
	  -DCLUSTERSIM_SANITIZE=ON -DCLUSTERSIM_FUZZ=ON -DCLUSTERSIM_PYTHON=OFF -DCLUSTERSIM_HEAVY_TESTS=OFF \
	  -DCLUSTERSIM_BENCH=OFF $(CMAKE_ARGS) > $(SANBUILD)-configure.log || (cat $(SANBUILD)-configure.log; exit 1)
	@cmake --build $(SANBUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(SANBUILD) --output-on-failure -j $(JOBS)

# A short libFuzzer run of the scenario loader from the seed corpus (needs `make sanitize`).
fuzz: sanitize
	@rm -rf $(SANBUILD)/fuzz-corpus && mkdir -p $(SANBUILD)/fuzz-corpus && cp fuzz/corpus/* $(SANBUILD)/fuzz-corpus/
	$(SANBUILD)/fuzz/fuzz_scenario -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	  $(SANBUILD)/fuzz-corpus 2>&1 | tail -n 15
	@rm -rf $(SANBUILD)/fuzz-set-corpus && mkdir -p $(SANBUILD)/fuzz-set-corpus && cp fuzz/set_corpus/* $(SANBUILD)/fuzz-set-corpus/
	$(SANBUILD)/fuzz/fuzz_set -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  $(SANBUILD)/fuzz-set-corpus 2>&1 | tail -n 15
	@rm -rf $(SANBUILD)/fuzz-cli-corpus && mkdir -p $(SANBUILD)/fuzz-cli-corpus && cp fuzz/cli_corpus/* $(SANBUILD)/fuzz-cli-corpus/
	$(SANBUILD)/fuzz/fuzz_cli -max_total_time=$(FUZZ_SECONDS) -max_len=2048 -close_fd_mask=3 -print_final_stats=1 \
	  $(SANBUILD)/fuzz-cli-corpus 2>&1 | tail -n 15
	@rm -rf $(SANBUILD)/fuzz-trace-corpus && mkdir -p $(SANBUILD)/fuzz-trace-corpus && cp fuzz/trace_corpus/* $(SANBUILD)/fuzz-trace-corpus/
	$(SANBUILD)/fuzz/fuzz_trace -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  $(SANBUILD)/fuzz-trace-corpus 2>&1 | tail -n 15

# Regenerate the expected summaries of every scenario (tests/golden/), after a change that is
# meant to move numbers; the script prints what moved.
golden: build
	$(PYTHON) scripts/golden.py --build $(BUILD)

# The benchmarks, their output collected in $(BUILD)/bench.log, then each headline figure beside
# the previous release's (bench/baseline.json) as a ratio. `make bench-baseline` (at a release)
# stores today's figures as the new baseline.
bench: build
	@rm -f $(BUILD)/bench.log
	$(BUILD)/bench/bench_engine_hold | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_ring_allreduce | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_topology | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_collective --quick | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_comm | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_fleet | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_serving --quick | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_jobs --quick | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_startup | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_training --plan | tee -a $(BUILD)/bench.log
	$(BUILD)/bench/bench_scale --quick | tee -a $(BUILD)/bench.log
	@$(PYTHON) scripts/bench_compare.py $(BUILD)/bench.log

BENCH_NOTE ?= 2 cores
bench-baseline: bench
	$(PYTHON) scripts/bench_compare.py $(BUILD)/bench.log --save bench/baseline.json --note "$(BENCH_NOTE)"

clean:
	rm -rf $(BUILD) $(SANBUILD) $(BUILD)-configure.log $(SANBUILD)-configure.log

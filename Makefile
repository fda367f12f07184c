# The two commands a new user needs: `make run` and `make test`.
BUILD_DIR ?= build
# Release: optimized, no debug info (the fastest build; ASSERTs stay on in
# every build type). `make build BUILD_TYPE=RelWithDebInfo` for gdb/perf.
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
# ccache keys on paths relative to the checkout, so another clone of the
# repository (CI's) reuses the same cache entries.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: deps configure build test run bench clean

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

run: build
	@mkdir -p data
	$(BUILD_DIR)/samsa server --config config/server.properties

# The benchmark suite (bench/run_suite.py): the alternatives it compares
# against, the benchmark targets built in their own directory with -O2 and
# symbols (RelWithDebInfo, so the suite's perf profiles name functions),
# then the fixed suite, which writes bench/results/latest.md and prints
# its table.
BENCH_BUILD_DIR ?= build-bench
bench: deps
	@scripts/install-bench-deps.sh
	@cmake -S . -B $(BENCH_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
	@cmake --build $(BENCH_BUILD_DIR) -j $(JOBS) --target samsa samsa-null-broker samsa-alt-bench samsa-microbench
	@python3 bench/run_suite.py --build-dir $(BENCH_BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)

# The two commands a new user needs: `make run` and `make test`.
BUILD_DIR ?= build
# The fuzz build (make fuzz-build, below), whose binaries make test runs.
FUZZ_BUILD_DIR ?= build-fuzz
# Release: optimized, no debug info (the fastest build; ASSERTs stay on in
# every build type). `make build BUILD_TYPE=RelWithDebInfo` for gdb/perf.
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
# ccache keys on paths relative to the checkout, so another clone of the
# repository (CI's) reuses the same cache entries.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: deps configure build test run cluster bench bench-ab clean fuzz-build fuzz chaos

deps:
	@scripts/install-deps.sh
	@scripts/install-kafkajs.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DSAMSA_FUZZ_BUILD_DIR=$(abspath $(FUZZ_BUILD_DIR)) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The fuzz_* tests (label fuzz) run the fuzz build's binaries: built first.
test: build fuzz-build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

run: build
	@mkdir -p data
	$(BUILD_DIR)/samsa server --config config/server.properties

# A local cluster of CLUSTER_NODES combined nodes (`samsa dev cluster`):
# configs, data and logs under ./data/cluster, the bootstrap list printed,
# Ctrl-C stops every node. CLUSTER_BASE_PORT=9092 gives fixed ports.
CLUSTER_NODES ?= 3
CLUSTER_BASE_PORT ?=
cluster: build
	$(BUILD_DIR)/samsa dev cluster --brokers $(CLUSTER_NODES) $(if $(CLUSTER_BASE_PORT),--base-port $(CLUSTER_BASE_PORT))

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

# Before/after a change (bench/ab_compare.py): BASE (a git revision) is built
# in build-ab/ and both brokers run the same workloads interleaved.
BASE ?= HEAD~1
bench-ab: deps
	@cmake -S . -B $(BENCH_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
	@cmake --build $(BENCH_BUILD_DIR) -j $(JOBS) --target samsa
	@python3 bench/ab_compare.py --base $(BASE) --head $(BENCH_BUILD_DIR)/samsa

# The libFuzzer targets (tests/fuzz, docs/testing.md): their own build with
# clang, ASan and UBSan, of only the libraries they link.
FUZZ_CXX ?= clang++-14
fuzz-build: deps
	@cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAMSA_FUZZ=ON \
	  -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS)

# Long fuzzing runs: FUZZ_SECONDS per target, one target at a time (each
# uses one core), every target unless FUZZ_TARGETS names some. Findings are
# kept in tests/fuzz/regressions/<target>/ (make test replays them).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= request record_batch decompress log_recovery metadata_record offsets_record producer_snapshot \
  raft_request
fuzz: fuzz-build
	@failed=0; for t in $(FUZZ_TARGETS); do \
	  /usr/bin/python3 tests/fuzz/run_fuzz.py --fuzzer $(FUZZ_BUILD_DIR)/fuzz/fuzz_$$t --target $$t \
	    --seconds $(FUZZ_SECONDS) --work $(FUZZ_BUILD_DIR)/work/$$t --keep-findings || failed=1; \
	done; exit $$failed

# The chaos suite (tests/chaos, docs/testing.md): real brokers in a network
# namespace of the run's own under kill -9, SIGSTOP and nftables cuts, the
# recorded history judged by samsa-sim --check-history. Needs root (ip netns,
# nft); not part of `make test` (minutes, and privileges CI may not have).
# First the planted histories (each must be caught), then CHAOS_RUNS runs
# of CHAOS_ROUNDS rounds from CHAOS_SEED (default: from the clock). A skip
# (no namespace possible here) fails the target.
CHAOS_RUNS ?= 3
CHAOS_ROUNDS ?= 5
# 1: one broker; 3 or 5: a cluster of combined nodes (tests/chaos/chaos/cluster.py)
CHAOS_NODES ?= 1
CHAOS_SEED ?=
CHAOS_RUN = SAMSA_BIN=$(abspath $(BUILD_DIR))/samsa SAMSA_SIM=$(abspath $(BUILD_DIR))/samsa-sim \
  /usr/bin/python3 tests/chaos/run_chaos.py --out $(abspath $(BUILD_DIR))/chaos
chaos: build
	@scripts/install-chaos-deps.sh
	@status=0; \
	$(CHAOS_RUN) --runs 1 --rounds 1 --seed 1 --plant ack-unwritten --out $(abspath $(BUILD_DIR))/chaos/planted && \
	$(CHAOS_RUN) --runs 1 --rounds 1 --seed 2 --plant drop-read --out $(abspath $(BUILD_DIR))/chaos/planted && \
	$(CHAOS_RUN) --runs $(CHAOS_RUNS) --rounds $(CHAOS_ROUNDS) --nodes $(CHAOS_NODES) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED)) \
	  || status=$$?; \
	if [ $$status -eq 77 ]; then echo "make chaos: SKIPPED, and a skip is a failure (see above)" >&2; exit 1; fi; \
	exit $$status

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR)

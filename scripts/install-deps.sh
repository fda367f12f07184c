#!/usr/bin/env bash
# Installs the Debian packages Samsa needs to build, test and run.
# Idempotent: only what is missing is installed, so `make run` and `make test`
# can call it every time at the cost of one dpkg query. nftables, iproute2
# and util-linux (setpriv) serve the chaos suite's fixed set in `make test`
# (tests/chaos: a network namespace, nft cuts, a uid per node).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  clang-14 libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev
  libfmt-dev libcli11-dev librdkafka-dev
  kcat python3 python3-pytest python3-confluent-kafka python3-kafka python3-snappy python3-lz4 zstd
  burrow zookeeper
  nftables iproute2 util-linux
)

exec "$(dirname "$0")/apt-install-missing.sh" "${packages[@]}"

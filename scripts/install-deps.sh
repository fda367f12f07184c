#!/usr/bin/env bash
# Installs the Debian packages Samsa needs to build, test and run.
# Idempotent: only what is missing is installed, so `make run` and `make test`
# can call it every time at the cost of one dpkg query.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev
  libfmt-dev libcli11-dev librdkafka-dev
  kcat python3 python3-pytest python3-confluent-kafka python3-kafka python3-snappy python3-lz4
  burrow zookeeper
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

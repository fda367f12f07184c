#!/usr/bin/env bash
# Installs what `make bench` needs beyond the build and test dependencies:
# the alternatives the suite compares against (NATS JetStream, Redis
# Streams) and the profilers used to explain its figures. Kept apart from
# install-deps.sh so `make test` never pulls them in. Idempotent.
set -euo pipefail

packages=(nats-server redis-server redis-tools linux-perf valgrind libbenchmark-dev)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-bench-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The Debian packages start their services; the suite runs its own
# instances on other ports, bounded in time, so stop the system ones.
for svc in redis-server nats-server; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl stop "$svc" || true
  fi
done

#!/usr/bin/env bash
# Installs what `make bench` needs beyond the build and test dependencies:
# the alternatives the suite compares against (NATS JetStream, Redis
# Streams) and the profilers used to explain its figures. Kept apart from
# install-deps.sh so `make test` never pulls them in. Idempotent.
set -euo pipefail

packages=(nats-server redis-server redis-tools linux-perf valgrind libbenchmark-dev)

before=$(dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -c "install ok installed" || true)
"$(dirname "$0")/apt-install-missing.sh" "${packages[@]}"
[ "$before" -eq ${#packages[@]} ] && exit 0
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
# The Debian packages start their services; the suite runs its own
# instances on other ports, bounded in time, so stop the system ones.
for svc in redis-server nats-server; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl stop "$svc" || true
  fi
done

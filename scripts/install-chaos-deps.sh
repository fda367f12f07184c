#!/usr/bin/env bash
# Installs what the chaos suite (tests/chaos, `make chaos`) needs on top of
# install-deps.sh: nftables, whose rules inside the run's network namespace
# cut connections, and iproute2 for `ip netns`.
set -euo pipefail

exec "$(dirname "$0")/apt-install-missing.sh" nftables iproute2

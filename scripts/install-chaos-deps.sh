#!/usr/bin/env bash
# Installs what the chaos suite (tests/chaos, `make chaos`) needs: nftables,
# whose rules inside the run's network namespace cut connections, and
# iproute2 for `ip netns`. install-deps.sh has them too, since `make test`
# runs the suite's fixed set; kept so `make chaos` says what it needs.
set -euo pipefail

exec "$(dirname "$0")/apt-install-missing.sh" nftables iproute2

#!/usr/bin/env bash
# Installs KafkaJS, one of the real clients in `make test`
# (tests/integration/test_kafkajs.py), into tests/kafkajs/node_modules
# (git-ignored) from the committed package.json and package-lock.json, with
# `npm ci`: the exact version the lock pins (kafkajs 2.2.4, MIT), nothing
# global. Node.js and npm come from Debian's nodejs and npm when missing.
# Idempotent: nothing to do when node_modules already holds what the lock
# names (npm's own copy of the lock it installed, .package-lock.json).
set -euo pipefail

dir="$(cd "$(dirname "$0")/../tests/kafkajs" && pwd)"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  "$(dirname "$0")/apt-install-missing.sh" nodejs npm
fi

installed="$dir/node_modules/.package-lock.json"
if [ -f "$installed" ] && [ -f "$dir/node_modules/kafkajs/package.json" ] &&
   node -e '
     const [lock, installed] = process.argv.slice(1).map(f => JSON.parse(require("fs").readFileSync(f)).packages)
     const same = Object.keys(lock).filter(k => k).every(k => installed[k] && installed[k].version === lock[k].version)
     process.exit(same ? 0 : 1)' "$dir/package-lock.json" "$installed"; then
  exit 0
fi

echo "$(basename "$0"): npm ci in $dir"
cd "$dir" && npm ci --no-audit --no-fund --loglevel=error

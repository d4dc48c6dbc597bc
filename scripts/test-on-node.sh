#!/usr/bin/env bash
# Runs the test suite (the README's `pnpm test`: the SDK's and the server's, on every backend the
# environment configures; not the console's browser tests) on Node.js MAJOR, beside the Node.js
# this checkout was installed with.
# Native addons are built per Node.js ABI, so the suite runs in a copy of this checkout's files
# (tracked and untracked, not ignored) with its own install, and the checkout itself is left as
# it was.
#
#   bash scripts/test-on-node.sh 22
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pnpm.sh

major="${1:?usage: bash scripts/test-on-node.sh MAJOR (for example 22)}"
bin="$(bash scripts/node-runtime.sh "$major")"
copy="$(mktemp -d)/agentline"
trap 'rm -rf "$(dirname "$copy")"' EXIT
mkdir -p "$copy"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$copy"

cd "$copy"
export PATH="$bin:$PATH"
# node-gyp builds better-sqlite3 against the headers of the Node.js that runs it, which ship in
# the same registry package; a machine-wide npm `nodedir` would point at another version's.
export npm_config_nodedir="$(dirname "$bin")"
echo "test-on-node: Node $(node -v), installing in $copy" >&2
ensure_pnpm
pnpm install --frozen-lockfile --prefer-offline
# The console's browser tests are left out: the page runs in Chromium, not in Node.js, and the
# server under it is what the suite covers on this version.
pnpm -r --filter '!console' --workspace-concurrency=1 test

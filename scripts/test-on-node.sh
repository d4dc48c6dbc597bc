#!/usr/bin/env bash
# Runs the test suite (the README's `pnpm test`: the SDK's and the server's, on every backend the
# environment configures; not the console's browser tests) on Node.js MAJOR, beside the Node.js
# this checkout was installed with.
# Native addons are built per Node.js ABI, so the suite runs in a copy of this checkout's files
# (tracked and untracked, not ignored) with its own install, and the checkout itself is left as
# it was.
#
#   bash scripts/test-on-node.sh 22
#   AGENTLINE_TEST_BACKENDS=sqlite bash scripts/test-on-node.sh 24   (CI's run)
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
# better-sqlite3 12 compiles SQLite on install wherever its prebuilt binary cannot be downloaded
# (a fresh CI machine), the costliest part of this install; 13 ships its binaries in the package.
# Where 13's engines field lets pnpm install it (better-sqlite3-napi), the server loads it alone
# (apps/server/src/db/engine/sqlite-driver.ts), so there the copy's install leaves 12 unbuilt.
napi="$(sed -nE '/^ +better-sqlite3-napi:$/{n;n;s/^ +version: (better-sqlite3@[0-9.]+)$/\1/p;}' pnpm-lock.yaml)"
napi_from="$(grep -A2 "^  $napi:\$" pnpm-lock.yaml | sed -nE "s/^ +engines: \{node: '>=([0-9]+)'\}$/\1/p")"
[ -n "$napi" ] && [ -n "$napi_from" ] ||
  { echo "test-on-node: pnpm-lock.yaml names no better-sqlite3-napi version and engines" >&2; exit 1; }
if [ "$major" -ge "$napi_from" ]; then
  grep -qx '  - better-sqlite3' pnpm-workspace.yaml ||
    { echo "test-on-node: pnpm-workspace.yaml's onlyBuiltDependencies names no better-sqlite3" >&2; exit 1; }
  sed -i "s/^  - better-sqlite3\$/  - $napi/" pnpm-workspace.yaml
fi
ensure_pnpm
pnpm install --frozen-lockfile --prefer-offline
# The console's browser tests are left out: the page runs in Chromium, not in Node.js, and the
# server under it is what the suite covers on this version. The SDK's tests mostly wait on timers,
# so they run beside the server's, as `pnpm test` runs its packages.
pnpm -r --no-sort --filter '!console' --workspace-concurrency=2 test

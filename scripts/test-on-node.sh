#!/usr/bin/env bash
# Runs the test suite (the README's `pnpm test`: the SDK's and the server's, on every backend the
# environment configures; not the console's browser tests) on Node.js MAJOR, beside the Node.js
# this checkout was installed with.
# Native addons are built per Node.js ABI, so the suite runs in a copy of this checkout's files
# (tracked and untracked, not ignored) with its own install, and the checkout itself is left as
# it was.
#
#   bash scripts/test-on-node.sh 22
#   bash scripts/test-on-node.sh 24 --runtime
#
# --runtime: the SDK's tests and, of the server's, only the files that exercise what differs between
# Node.js versions (server processes, threads, sockets, the SQLite addon's own tests:
# tools/runtime-test-files.ts picks them); the other files call the app in-process, the same
# JavaScript on every version.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pnpm.sh

major="${1:?usage: bash scripts/test-on-node.sh MAJOR [--runtime] (for example 22)}"
scope="${2:-all}"
[ "$scope" = all ] || [ "$scope" = --runtime ] || { echo "test-on-node: the second word is --runtime or nothing, not $scope" >&2; exit 1; }
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
# server under it is what the suite covers on this version.
if [ "$scope" = --runtime ]; then
  pnpm --filter @agentline/sdk test
  picked="$(pnpm exec tsx tools/runtime-test-files.ts)"
  mapfile -t files <<<"$picked"
  echo "test-on-node: ${#files[@]} server test files that exercise the runtime" >&2
  pnpm --filter @agentline/server exec vitest run "${files[@]}"
else
  pnpm -r --filter '!console' --workspace-concurrency=1 test
fi

#!/usr/bin/env bash
# Builds a self-contained deployable folder of the server: the server bundled by esbuild
# (apps/server/bundle.ts: one file per process or thread entry), the drizzle migrations, the
# console's built files and production dependencies only (what the bundle leaves out is among
# them). It starts from anywhere with `node <dir>/dist/main.js` and has the operator CLI at
# `node <dir>/dist/cli/main.js`.
# Usage: bash scripts/deploy-build.sh [target dir, default deploy/server in the repository]
set -euo pipefail
# Absolute and taken before the cd, so a relative folder means one relative to the caller.
target="$(realpath -m "${1:-$(dirname "$0")/../deploy/server}")"
cd "$(dirname "$0")/.."
source scripts/lib/pnpm.sh
ensure_pnpm

# Replaces only an empty folder or an earlier build, never a folder that holds something else.
if [ -n "$(ls -A "$target" 2>/dev/null)" ] && [ ! -e "$target/dist/main.js" ]; then
  echo "deploy-build: $target is not empty and holds no earlier build; choose another folder" >&2
  exit 1
fi
rm -rf "$target"
rm -rf apps/server/dist
pnpm --filter @agentline/server build
# Deployed to a folder outside the workspace first: for a target inside it, pnpm also writes stray
# .bin links below apps/server. --legacy: the server has no production workspace dependencies, so
# pnpm 10's injected-workspace mode (which needs a repository-wide setting) brings nothing here.
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
pnpm --filter @agentline/server deploy --prod --legacy "$staging/server"
# The console's built files, which the server serves at /console from its folder's console/.
pnpm --filter console build >/dev/null
cp -r apps/console/dist "$staging/server/console"
mkdir -p "$(dirname "$target")"
mv "$staging/server" "$target"
for required in dist/main.js dist/cli/main.js drizzle/sqlite console/index.html; do
  [ -e "$target/$required" ] || { echo "deploy-build: $target/$required is missing" >&2; exit 1; }
done
echo "Deployable server in $target: node $target/dist/main.js" >&2

#!/usr/bin/env bash
# `pnpm typecheck`: every TypeScript project of the repository (the server, the console, the SDK
# and tools/), with TypeScript 7's native compiler (the `typescript-7` catalog entry), one project
# after another and single-threaded: beside ESLint on 2 cores, threads only add CPU
# (docs/benchmarks.md, "Figures behind the code").
set -euo pipefail
cd "$(dirname "$0")/.."
for project in apps/server apps/console packages/sdk tools; do
  echo "typecheck: $project"
  node node_modules/typescript-7/bin/tsc --singleThreaded --noEmit -p "$project/tsconfig.json"
done

#!/usr/bin/env bash
# Fails when spec/openapi.yaml breaks clients of the last released contract without moving
# info.version. Released contracts are kept in spec/released/openapi-<version>.yaml; after a
# release, copy the spec there.
set -euo pipefail
cd "$(dirname "$0")/.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true

released=$(ls spec/released/openapi-*.yaml | sort -V | tail -n 1)
released_version=$(basename "$released" .yaml | sed 's/^openapi-//')
current_version=$(node -e "console.log(require('yaml').parse(require('fs').readFileSync('spec/openapi.yaml','utf8')).info.version)")

if [ "$current_version" != "$released_version" ]; then
  echo "info.version moved from $released_version to $current_version: breaking changes are allowed; snapshot the spec into spec/released/ when it ships."
  exit 0
fi
echo "Comparing spec/openapi.yaml with the released $released (info.version $current_version):"
if ! redocly diff "$released" spec/openapi.yaml --fail-on major; then
  echo "spec/openapi.yaml breaks clients of the released $released_version contract; undo the breaking change or move info.version." >&2
  exit 1
fi

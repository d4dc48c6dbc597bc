#!/usr/bin/env bash
# Fails when spec/openapi.yaml breaks clients of the last released contract without moving
# info.version, unless spec/accepted-breaking.yaml accepts the change. Released contracts are kept
# in spec/released/openapi-<version>.yaml; after a release, copy the spec there.
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
report=$(mktemp)
trap 'rm -f "$report"' EXIT
redocly diff "$released" spec/openapi.yaml --fail-on none
redocly diff "$released" spec/openapi.yaml --fail-on none --format json -o "$report" >/dev/null
# A major change passes only when spec/accepted-breaking.yaml lists it, with its reason.
if ! tsx tools/spec-breaking-accepted.ts "$report" spec/accepted-breaking.yaml "$current_version"; then
  echo "spec/openapi.yaml breaks clients of the released $released_version contract; undo the breaking change, move info.version, or accept it in spec/accepted-breaking.yaml with what real clients send." >&2
  exit 1
fi

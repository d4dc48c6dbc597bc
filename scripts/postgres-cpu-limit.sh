#!/usr/bin/env bash
# Holds each local PostgreSQL cluster (`main`, and `replica` when scripts/postgres-replica-setup.sh
# made it) to a share of one vCPU, so that a benchmark on this one machine sees the database
# servers as the bottleneck, as it would with each on a machine of its own.
# `sudo bash scripts/postgres-cpu-limit.sh 30` gives each 30% of a vCPU; `off` lifts the limit.
# Uses cgroup v1's cpu controller; a cluster started again afterwards is no longer limited.
set -euo pipefail

share="${1:?give a percentage of one vCPU for each cluster (1-100), or off}"
if [ "$share" = off ]; then
  quota=-1
elif [[ "$share" =~ ^[0-9]+$ ]] && [ "$share" -ge 1 ] && [ "$share" -le 100 ]; then
  quota=$((share * 1000))
else
  echo "postgres-cpu-limit: '$share' is not a percentage from 1 to 100, nor off" >&2
  exit 2
fi
root=/sys/fs/cgroup/cpu
if [ ! -w "$root" ]; then
  echo "postgres-cpu-limit: $root is not writable: run as root on a machine with cgroup v1's cpu controller" >&2
  exit 1
fi

for cluster in main replica; do
  pid_file="/var/lib/postgresql/15/$cluster/postmaster.pid"
  [ -f "$pid_file" ] || continue
  group="$root/agentline_postgres_$cluster"
  mkdir -p "$group"
  echo 100000 >"$group/cpu.cfs_period_us"
  echo "$quota" >"$group/cpu.cfs_quota_us"
  # The postmaster and what runs now; backends it starts later inherit its group.
  postmaster="$(head -1 "$pid_file")"
  for pid in "$postmaster" $(pgrep -P "$postmaster"); do
    echo "$pid" >"$group/cgroup.procs" 2>/dev/null || true
  done
  if [ "$share" = off ]; then
    echo "postgres-cpu-limit: $cluster has no limit"
  else
    echo "postgres-cpu-limit: $cluster at $share% of a vCPU"
  fi
done

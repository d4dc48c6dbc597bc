# Starting a PostgreSQL cluster of pg_lsclusters (scripts/postgres-setup.sh and its replica).

# Starts cluster <version> <name> unless it is online, then waits until it accepts connections on
# 127.0.0.1:<port>, at most <seconds>. A cluster that was not shut down cleanly first replays the
# WAL written since its last checkpoint (a standby: since its last restartpoint, up to
# max_wal_size and more), which takes minutes on a busy machine, beyond pg_ctl's own 60 s wait:
# so pg_ctl does not wait (-W) and this loop does, saying every 15 s how far the replay is.
start_cluster() {
  local version="$1" name="$2" port="$3" seconds="$4" started=$SECONDS next_report=$((SECONDS + 15))
  local log="/var/log/postgresql/postgresql-$version-$name.log"
  if [[ "$(pg_lsclusters --no-header | awk -v name="$name" '$2 == name { print $4 }')" != online* ]]; then
    echo "starting PostgreSQL $version/$name" >&2
    pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start -- -W
  fi
  until pg_isready -q -h 127.0.0.1 -p "$port"; do
    if [ $((SECONDS - started)) -ge "$seconds" ]; then
      echo "PostgreSQL $version/$name did not accept connections on 127.0.0.1:$port within ${seconds}s (see $log)" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$next_report" ]; then
      echo "still waiting for PostgreSQL $version/$name ($((SECONDS - started))s): $(tail -n 1 "$log" 2>/dev/null | cut -c 1-160)" >&2
      next_report=$((SECONDS + 15))
    fi
    sleep 1
  done
}

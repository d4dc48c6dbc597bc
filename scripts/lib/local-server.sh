# Helpers for scripts that start a server on 127.0.0.1 and probe it (tools/*-check.sh).

# Prints a TCP port of 127.0.0.1 that is free right now.
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Waits until <url> answers 2xx; fails early if process <pid> has exited. At most <seconds>.
wait_until_ready() {
  local url="$1" pid="$2" seconds="$3" deadline=$((SECONDS + $3))
  until curl -fs "$url" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "the server process exited before $url answered" >&2; return 1; }
    [ "$SECONDS" -lt "$deadline" ] || { echo "$url did not answer within ${seconds}s" >&2; return 1; }
    sleep 0.2
  done
}

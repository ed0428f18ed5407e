#!/usr/bin/env bash
# Exact instructions per request of the shipped binary: `rosetta serve`,
# built from this tree with the configuration the load harness writes (the
# default SQLite store, usage rows, the access log), runs under cachegrind
# while wrk sends it the harness's 2.8 KB conversation at c connections
# through the bench mock for secs seconds. It prints "requests non2xx rows
# instructions"; two runs of different lengths give the cost of a request
# as the slope between them, free of start-up and shutdown:
#
#   scripts/cachegrind.sh 5 /tmp/cg5 && scripts/cachegrind.sh 20 /tmp/cg20
#   (instructions20 - instructions5) / (rows20 - rows5)
#
# With -bare the bare fasthttp pass-through (bench/bare.go) runs in the
# gateway's place (no rows: use wrk's request counts). The function-level
# split is in OUTDIR/cg.out (cg_annotate). Needs valgrind, wrk, sqlite3.
set -euo pipefail
bare=false
if [ "${1:-}" = -bare ]; then bare=true; shift; fi
secs=${1:?usage: scripts/cachegrind.sh [-bare] SECS OUTDIR [CONNECTIONS]}
out=${2:?usage: scripts/cachegrind.sh [-bare] SECS OUTDIR [CONNECTIONS]}
conns=${3:-64}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/rosetta.db* "$out"/cg.out "$out"/mockin "$out"/gwin
(cd "$root" && go build -o "$out/bench" ./bench && go build -o "$out/rosetta" ./cmd/rosetta)
"$out/bench" -serve-role=body > "$out/body.json"

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT
mkfifo "$out/mockin"
"$out/bench" -serve-role=mock < "$out/mockin" > "$out/mock.out" 2> "$out/mock.err" &
pids+=($!)
exec 9> "$out/mockin" # the mock serves until this closes
ready() { for _ in $(seq 300); do grep -q '^ready' "$1" 2>/dev/null && return; sleep 0.2; done; echo "$1: not ready" >&2; exit 1; }
ready "$out/mock.out"
mock=$(sed -n 's/^ready mock=//p' "$out/mock.out")

cg=(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out/cg.out")
if $bare; then
  mkfifo "$out/gwin"
  GOMAXPROCS=1 "${cg[@]}" "$out/bench" -serve-role=gateway -mock="$mock" -bare=true < "$out/gwin" > "$out/gw.out" 2> "$out/gw.err" &
  gw=$!
  exec 8> "$out/gwin"
  ready "$out/gw.out"
  addr=$(sed -n 's/^ready gateway=//p' "$out/gw.out")
else
  port=$((20000 + RANDOM % 20000))
  "$out/bench" -serve-role=config -mock="$mock" | sed "s/127.0.0.1:0/127.0.0.1:$port/" > "$out/rosetta.yaml"
  (cd "$out" && GOMAXPROCS=1 exec "${cg[@]}" ./rosetta serve -config rosetta.yaml > gw.out 2> gw.err) &
  gw=$!
  addr=127.0.0.1:$port
  for _ in $(seq 300); do curl -fs -o /dev/null "http://$addr/health" && break; sleep 0.2; done
fi
pids+=("$gw")
cat > "$out/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $("$out/bench" -serve-role=key)"
local f = io.open("$out/body.json"); wrk.body = f:read("*a"); f:close()
LUA
wrk -t1 -c"$conns" -d"${secs}s" -s "$out/post.lua" "http://$addr/v1/chat/completions" > "$out/wrk.out" 2>&1
if $bare; then exec 8>&-; else kill -TERM "$gw"; fi # SIGTERM: the gateway drains and writes its last rows
wait "$gw" || true
requests=$(awk '/requests in/ {print $1}' "$out/wrk.out")
non2xx=$(awk '/Non-2xx/ {print $NF}' "$out/wrk.out")
rows=0
if [ -f "$out/rosetta.db" ]; then rows=$(sqlite3 "$out/rosetta.db" 'SELECT count(*) FROM usage_rows'); fi
echo "$requests ${non2xx:-0} $rows $(awk '/^summary:/ {print $2}' "$out/cg.out")"

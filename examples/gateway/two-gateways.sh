#!/usr/bin/env bash
# Two gateways sharing one Redis in front of three fake vLLM backends, all on 127.0.0.1, and the
# load driver alternating each session's turns between them; prints the driver's report (statuses,
# routing reasons, sessions served by more than one backend, hit rates) and stops everything.
# Needs redis-server. Flags after the script's name go to the load driver, e.g.:
#   examples/gateway/two-gateways.sh --sessions 200 --turns 8 --concurrency 16
# STORE_TIMEOUT_MS (default 50, the library's default) sets both gateways' store timeout.
set -euo pipefail
cd "$(dirname "$0")/../.."
REDIS_PORT=${REDIS_PORT:-6392}
STORE_TIMEOUT_MS=${STORE_TIMEOUT_MS:-50}
dir=$(mktemp -d)
# Through the reactor, nothing installed into ~/.m2: the gateway module comes last, so the file
# ends with its class path (the reactor's modules as their target/classes).
mvn -B -ntp -q -pl examples/gateway -am test-compile dependency:build-classpath \
  -Dmdep.outputFile="$dir/cp.txt"
cp="examples/gateway/target/classes:$(cat "$dir/cp.txt")"
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ -f "$dir/redis.pid" ]]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
  sleep 0.5
  rm -rf "$dir"
}
trap stop EXIT
if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  echo "something already answers on port $REDIS_PORT: set REDIS_PORT to a free port" >&2
  exit 1
fi
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir"
for _ in $(seq 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis="redis://127.0.0.1:$REDIS_PORT"

backends=()
for i in 0 1 2; do
  java -cp "$cp" io.affinityrouter.examples.fakevllm.FakeVllmServer --port $((8101 + i)) \
    > "$dir/vllm-$i.log" 2>&1 &
  pids+=($!)
  backends+=(--backend "vllm-$i=http://127.0.0.1:$((8101 + i))")
done
for g in 0 1; do
  java -cp "$cp" io.affinityrouter.examples.httpgateway.Gateway --listen "127.0.0.1:$((8180 + g))" \
    "${backends[@]}" --redis "$redis" --store-timeout-ms "$STORE_TIMEOUT_MS" \
    > "$dir/gateway-$g.log" 2>&1 &
  pids+=($!)
done
for port in 8101 8102 8103 8180 8181; do
  for _ in $(seq 600); do # up to 60 s: JVMs start slowly on a busy machine
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
done
java -cp "$cp" io.affinityrouter.examples.httpgateway.LoadDriver \
  --gateway http://127.0.0.1:8180 --gateway http://127.0.0.1:8181 "${backends[@]}" "$@"

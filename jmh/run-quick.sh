#!/usr/bin/env bash
# Short profile of every benchmark (a few minutes on 2 cores): one fork, 2 x 1 s warm-up and
# 3 x 1 s measurement each, -prof gc; writes one JMH JSON file per run and quick.md (results table,
# goal verdicts, index footprint) into OUT_DIR (default jmh/target/quick).
#
# Starts a throw-away redis-server on 127.0.0.1:$REDIS_PORT (default 6390), measures
# `redis-benchmark -t get` with $REDIS_THREADS clients (default 4), runs the Redis benchmark with as
# many threads, and stops the server on exit. Without redis-server the Redis goals are reported as
# not run.
#
# Usage: jmh/run-quick.sh [OUT_DIR]      (REBUILD=1 to rebuild the jar first)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-jmh/target/quick}
JAR=jmh/target/benchmarks.jar
REDIS_PORT=${REDIS_PORT:-6390}
REDIS_THREADS=${REDIS_THREADS:-4}

if [[ ! -f "$JAR" || -n "${REBUILD:-}" ]]; then
  mvn -B -ntp -q -pl jmh -am package -DskipTests
fi
mkdir -p "$OUT"

args=()
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    echo "something already answers on port $REDIS_PORT; the benchmark flushes its server:" \
      "set REDIS_PORT to a free port" >&2
    exit 1
  fi
  dir=$(mktemp -d)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir"
  stop_redis() {
    if [[ -f "$dir/redis.pid" ]]; then
      kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
      sleep 0.5
    fi
    rm -rf "$dir"
  }
  trap stop_redis EXIT
  for _ in $(seq 50); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  rps=$(redis-benchmark -p "$REDIS_PORT" -t get -c "$REDIS_THREADS" -n 200000 --csv \
    | awk -F'","' '/^"GET"/ {print $2}')
  echo "redis-benchmark -t get -c $REDIS_THREADS: $rps requests/s"
  echo "redis-benchmark -p $REDIS_PORT -t get -c $REDIS_THREADS -n 200000: $rps GET/s" \
    > "$OUT/redis-benchmark.txt"
  args=("$rps" "$REDIS_THREADS")
else
  echo "redis-server or redis-benchmark not found: skipping the Redis benchmark" >&2
fi

java -cp "$JAR" io.affinityrouter.jmh.QuickProfile "$OUT" "${args[@]}"

#!/usr/bin/env bash
# Starts three fake vLLM backends (127.0.0.1:8001-8003) and one gateway (127.0.0.1:8080) and prints
# how to curl it. Flags are passed to LocalFleet, e.g.:
#   examples/gateway/run-local.sh                      # run until Ctrl-C
#   examples/gateway/run-local.sh --load               # also run the load driver, print hit rates, exit
#   examples/gateway/run-local.sh --redis redis://127.0.0.1:6379 --latency-scale 0.1
set -euo pipefail
cd "$(dirname "$0")/../.."
mvn -B -ntp -q -pl examples/gateway -am install -DskipTests
exec mvn -B -ntp -q -pl examples/gateway exec:java -Dexec.args="$*"

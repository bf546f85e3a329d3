#!/usr/bin/env bash
# Starts three fake vLLM backends (127.0.0.1:8001-8003) and one gateway (127.0.0.1:8080) and prints
# how to curl it. Flags are passed to LocalFleet, e.g.:
#   examples/gateway/run-local.sh                      # run until Ctrl-C
#   examples/gateway/run-local.sh --load               # also run the load driver, print hit rates, exit
#   examples/gateway/run-local.sh --redis redis://127.0.0.1:6379 --latency-scale 0.1
# Builds through the reactor (nothing is installed into ~/.m2) and runs LocalFleet with exec:java.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec mvn -B -ntp -q -pl examples/gateway -am test-compile exec:java -Dfakevllm.exec.skip=true \
  -Dexec.args="$*"

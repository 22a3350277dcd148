#!/usr/bin/env bash
# Runs a command and prints how long it took: `hack/timed.sh PHASE COMMAND...`.
# Exits with the command's status.
phase=$1; shift
start=$(date +%s)
echo "==> $phase: started $(date -u +%H:%M:%S)"
status=0
"$@" || status=$?
echo "==> $phase: $(( $(date +%s) - start ))s (exit $status)"
exit "$status"

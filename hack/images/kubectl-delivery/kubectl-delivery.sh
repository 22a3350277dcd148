#!/bin/sh
# Waits until every pod named in /etc/mpi/hostfile (first word of each line, up to a dot or
# colon) is Running and Ready in $NAMESPACE, then writes "<pod IP> <pod name>" lines to
# $TARGET_DIR/hosts. Gives up after $DELIVERY_TIMEOUT seconds (default 600).
set -eu
hostfile=${HOSTFILE:-/etc/mpi/hostfile}
target=${TARGET_DIR:-/opt/kube}
deadline=$(( $(date +%s) + ${DELIVERY_TIMEOUT:-600} ))
pods=$(sed -e 's/[[:space:]].*//' -e 's/[.:].*//' "$hostfile" | grep -v '^$' || true)
: >"$target/hosts.tmp"
for pod in $pods; do
  while :; do
    state=$(kubectl get pod -n "$NAMESPACE" "$pod" \
      -o 'jsonpath={.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.status.podIP}' \
      2>/dev/null || true)
    # shellcheck disable=SC2086  # split into phase, ready and IP
    set -- $state
    if [ "${1:-}" = Running ] && [ "${2:-}" = True ] && [ -n "${3:-}" ]; then
      echo "$3 $pod" >>"$target/hosts.tmp"
      break
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "kubectl-delivery: pod $pod not Running and Ready in time (last: ${state:-not found})" >&2
      exit 1
    fi
    sleep 1
  done
done
mv "$target/hosts.tmp" "$target/hosts"

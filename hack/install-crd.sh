#!/usr/bin/env bash
# Installs (or updates) the MPIJob CRD in the cluster of $KUBECONFIG and waits until it is
# Established. `kubectl wait --for=condition=Established` fails at once while a just-created
# CRD has no status yet, so this polls instead (60 s at most).
#   KUBECONFIG=... hack/install-crd.sh
set -euo pipefail
cd "$(dirname "$0")/.."
kubectl="$(bash hack/local-cluster.sh bin-dir)/kubectl"
command -v "$kubectl" >/dev/null 2>&1 || kubectl=kubectl
"$kubectl" apply --server-side --force-conflicts -f deploy/crd/kubeflow.org_mpijobs.yaml
for _ in $(seq 120); do
  established=$("$kubectl" get crd mpijobs.kubeflow.org \
    -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null || true)
  if [[ $established == True ]]; then
    echo "crd/mpijobs.kubeflow.org established"
    exit 0
  fi
  sleep 0.5
done
echo "crd/mpijobs.kubeflow.org not established after 60 s" >&2
exit 1

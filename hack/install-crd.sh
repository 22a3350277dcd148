#!/usr/bin/env bash
# Installs (or updates) the CRDs of deploy/crd/ (MPIJob, TFJob, PyTorchJob) in the cluster of $KUBECONFIG
# and waits until each is Established. `kubectl wait --for=condition=Established` fails at once
# while a just-created CRD has no status yet, so this polls instead (60 s at most).
#   KUBECONFIG=... hack/install-crd.sh
set -euo pipefail
cd "$(dirname "$0")/.."
kubectl="$(bash hack/local-cluster.sh bin-dir)/kubectl"
command -v "$kubectl" >/dev/null 2>&1 || kubectl=kubectl
for file in deploy/crd/kubeflow.org_*.yaml; do
  "$kubectl" apply --server-side --force-conflicts -f "$file"
done
for crd in mpijobs.kubeflow.org tfjobs.kubeflow.org pytorchjobs.kubeflow.org; do
  established=""
  for _ in $(seq 120); do
    established=$("$kubectl" get crd "$crd" \
      -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null || true)
    [[ $established == True ]] && break
    sleep 0.5
  done
  if [[ $established != True ]]; then
    echo "crd/$crd not established after 60 s" >&2
    exit 1
  fi
  echo "crd/$crd established"
done

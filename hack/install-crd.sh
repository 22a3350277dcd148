#!/usr/bin/env bash
# Installs (or updates) the MPIJob CRD in the cluster of $KUBECONFIG and waits until it is
# Established. `kubectl wait --for=condition=Established` fails at once while a just-created
# CRD has no status yet, so this polls instead (60 s at most).
#   KUBECONFIG=... hack/install-crd.sh
set -euo pipefail
cd "$(dirname "$0")/.."
kubectl="$(bash hack/local-cluster.sh bin-dir)/kubectl"
command -v "$kubectl" >/dev/null 2>&1 || kubectl=kubectl
# A controller run with --webhook-url points the conversion webhook at a URL; the manifest
# names the Service, and a CRD with both is invalid: go back to the Service form first.
url=$("$kubectl" get crd mpijobs.kubeflow.org \
  -o jsonpath='{.spec.conversion.webhook.clientConfig.url}' 2>/dev/null || true)
if [[ -n $url ]]; then
  "$kubectl" patch crd mpijobs.kubeflow.org --type merge -p '{"spec":{"conversion":{"webhook":
    {"clientConfig":{"url":null,"service":{"name":"mpi-operator-webhook","namespace":"mpi-operator"}}}}}}'
fi
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

#!/usr/bin/env bash
# Installs (or updates) the MPIJob CRD in the cluster of $KUBECONFIG and waits until it is
# Established. `kubectl wait --for=condition=Established` fails at once while a just-created
# CRD has no status yet, so this polls instead (60 s at most).
#   KUBECONFIG=... hack/install-crd.sh
set -euo pipefail
cd "$(dirname "$0")/.."
kubectl="$(bash hack/local-cluster.sh bin-dir)/kubectl"
command -v "$kubectl" >/dev/null 2>&1 || kubectl=kubectl
# A controller run with --webhook-url points the conversion webhook at its URL (the local
# cluster, make demo). The manifest names the Service instead, and a CRD with both is invalid:
# then apply the manifest without its clientConfig, keeping the URL and its caBundle.
url=$("$kubectl" get crd mpijobs.kubeflow.org \
  -o jsonpath='{.spec.conversion.webhook.clientConfig.url}' 2>/dev/null || true)
if [[ -n $url ]]; then
  echo "keeping the conversion webhook at $url"
  awk '/^      clientConfig:$/ {skip = 1; next}
       skip && /^      [a-zA-Z]/ {skip = 0}
       !skip' deploy/crd/kubeflow.org_mpijobs.yaml |
    "$kubectl" apply --server-side --force-conflicts -f -
else
  "$kubectl" apply --server-side --force-conflicts -f deploy/crd/kubeflow.org_mpijobs.yaml
fi
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

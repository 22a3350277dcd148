#!/usr/bin/env bash
# Installs (or updates) the CRDs of deploy/crd/ (every kind of the default install) in the
# cluster of $KUBECONFIG, or those of DIR (deploy/crd/trainjob: TrainJob's), and waits until each
# is Established. `kubectl wait --for=condition=Established` fails at once while a just-created
# CRD has no status yet, so this polls instead (60 s at most).
#   KUBECONFIG=... hack/install-crd.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-deploy/crd}
kubectl="$(bash hack/local-cluster.sh bin-dir)/kubectl"
command -v "$kubectl" >/dev/null 2>&1 || kubectl=kubectl
# A controller run with --webhook-url points the MPIJob conversion webhook at its URL (the local
# cluster, make demo). The manifest names the Service instead, and a CRD with both is invalid:
# then apply the manifest without its clientConfig, keeping the URL and its caBundle.
url=$("$kubectl" get crd mpijobs.kubeflow.org \
  -o jsonpath='{.spec.conversion.webhook.clientConfig.url}' 2>/dev/null || true)
for file in "$dir"/*_*.yaml; do
  if [[ -n $url && $file == */kubeflow.org_mpijobs.yaml ]]; then
    echo "keeping the conversion webhook at $url"
    awk '/^      clientConfig:$/ {skip = 1; next}
         skip && /^      [a-zA-Z]/ {skip = 0}
         !skip' "$file" | "$kubectl" apply --server-side --force-conflicts -f -
  else
    "$kubectl" apply --server-side --force-conflicts -f "$file"
  fi
done
for file in "$dir"/*_*.yaml; do
  name=$(basename "$file" .yaml); crd=${name#*_}.${name%%_*}
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

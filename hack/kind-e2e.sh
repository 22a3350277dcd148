#!/usr/bin/env bash
# e2e on kind, for machines with Docker (it cannot run where there is no Docker engine).
#
#   hack/kind-e2e.sh          create (or reuse) kind cluster "mpi-controller", install KWOK in
#                             it with the same fake nodes and pod stages as the local cluster,
#                             build and load the controller image, apply deploy/, run e2e/
#   hack/kind-e2e.sh down     delete the kind cluster
#
# The real kind node is tainted so that test pods land on KWOK's fake nodes (and behave as in
# the local cluster: sim.mpi-controller.io/duration and /exit-code annotations); the controller
# Deployment tolerates the taint. Needs: docker, kind, kubectl, python3.11.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=versions.env
source hack/versions.env
NAME=${KIND_CLUSTER_NAME:-mpi-controller}
IMAGE=${IMAGE:-mpi-controller:latest}
KWOK_RELEASE=https://github.com/kubernetes-sigs/kwok/releases/download/v$KWOK_VERSION
KUBECONFIG_FILE=${KUBECONFIG_FILE:-$HOME/.kube/kind-$NAME}

if [[ ${1:-} == down ]]; then exec kind delete cluster --name "$NAME"; fi

if ! kind get clusters | grep -qx "$NAME"; then
  kind create cluster --name "$NAME" --image "kindest/node:v$K8S_VERSION" --wait 120s
fi
mkdir -p "$(dirname "$KUBECONFIG_FILE")"
kind get kubeconfig --name "$NAME" >"$KUBECONFIG_FILE"
export KUBECONFIG=$KUBECONFIG_FILE
k() { kubectl --kubeconfig "$KUBECONFIG" "$@"; }

echo "==> installing KWOK $KWOK_VERSION in the cluster, with mpi-controller's pod stages"
k apply --server-side -f "$KWOK_RELEASE/kwok.yaml"
k apply --server-side -f "$KWOK_RELEASE/stage-fast.yaml"
k apply --server-side -f hack/kwok/stages.yaml
k -n kube-system rollout status deployment/kwok-controller --timeout=120s
for i in 0 1 2 3; do
  k apply --server-side -f - <<YAML
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: "256", memory: 2Ti, pods: "5000", nvidia.com/gpu: "8", ephemeral-storage: 10Ti}
  capacity: {cpu: "256", memory: 2Ti, pods: "5000", nvidia.com/gpu: "8", ephemeral-storage: 10Ti}
YAML
done

echo "==> tainting (after KWOK is running) the real node(s) so test pods go to KWOK's fake nodes"
k taint nodes --all mpi-controller.io/real-node=true:NoSchedule --overwrite

echo "==> building and loading $IMAGE"
docker build -f deploy/Dockerfile -t "$IMAGE" .
kind load docker-image "$IMAGE" --name "$NAME"

echo "==> deploying mpi-controller (deploy/overlays/standalone + kind toleration)"
k apply --server-side -k hack/kind
k -n mpi-operator rollout restart deployment/mpi-operator
k -n mpi-operator rollout status deployment/mpi-operator --timeout=180s

echo "==> running e2e/ against the in-cluster controller"
make install
MPI_CONTROLLER_E2E_IN_CLUSTER=1 .venv/bin/pytest -q e2e

#!/usr/bin/env bash
# Local Kubernetes control plane for development and tests: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and KWOK (fake nodes, simulated pods), built from the
# Go module proxy and run on 127.0.0.1.
#
#   hack/local-cluster.sh build    build (or reuse) the binaries in the cache
#   hack/local-cluster.sh up       build if needed, start everything, print the kubeconfig path last
#   hack/local-cluster.sh up --real-node   the same plus a real node (containerd, kubelet, CNI,
#                                  CoreDNS, local images) beside the KWOK nodes; see lib/realnode.sh
#   hack/local-cluster.sh down     stop the processes `up` started and remove the cluster state
#   hack/local-cluster.sh status   say whether the cluster is running
#   hack/local-cluster.sh env      print `export KUBECONFIG=...` for a running cluster
#   hack/local-cluster.sh stop|start|restart COMPONENT   (etcd, kube-apiserver, kwok, ...)
#   hack/local-cluster.sh compact  compact etcd at its current revision (prints it)
#
# Environment: MPI_CONTROLLER_CACHE (default ~/.cache/mpi-controller) holds binaries;
# MPI_CONTROLLER_CLUSTER_DIR (default $MPI_CONTROLLER_CACHE/cluster) holds state, pki and logs.
set -euo pipefail
HACK=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$HACK/versions.env"
CACHE=${MPI_CONTROLLER_CACHE:-$HOME/.cache/mpi-controller}
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo nogo)
BIN_DIR=$CACHE/bin/k8s-v$K8S_VERSION-etcd-v$ETCD_VERSION-kwok-v$KWOK_VERSION-$GO_VERSION
STATE=${MPI_CONTROLLER_CLUSTER_DIR:-$CACHE/cluster}
# shellcheck source=lib/build.sh
source "$HACK/lib/build.sh"
if [[ -f $HACK/lib/cluster.sh ]]; then
  # shellcheck source=lib/cluster.sh
  source "$HACK/lib/cluster.sh"
fi
# shellcheck source=lib/realnode.sh
source "$HACK/lib/realnode.sh"
# shellcheck disable=SC2034  # read by cluster_down (lib/cluster.sh)
CLUSTER_PRE_DOWN_HOOK=realnode_down

case "${1:-}" in
  build) build_all ;;
  up)
    if [[ ${2:-} == --real-node ]]; then
      realnode_requirements; build_all; realnode_build; realnode_configure
      cluster_up; realnode_up
    else
      build_all; cluster_up
    fi ;;
  build-real-node) realnode_requirements && build_all && realnode_build ;;
  real-node-check) realnode_check ;;
  real-node-uncached) realnode_uncached ;;
  down) cluster_down ;;
  status) cluster_status; realnode_status ;;
  start | stop | restart) component_cmd "$1" "${2:?component name}" ;;
  compact) etcd_compact ;;
  env) echo "export KUBECONFIG=$STATE/kubeconfig" ;;
  bin-dir) echo "$BIN_DIR" ;;
  *) awk 'NR>1 && /^#/ {sub(/^# ?/, ""); print; next} NR>1 {exit}' "$0"; exit 2 ;;
esac

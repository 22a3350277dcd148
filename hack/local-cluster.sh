#!/usr/bin/env bash
# Local Kubernetes control plane for development and tests: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and KWOK (fake nodes, simulated pods), built from the
# Go module proxy and run on 127.0.0.1.
#
#   hack/local-cluster.sh build    build (or reuse) the binaries in the cache
#   hack/local-cluster.sh up       build if needed, start everything, print the kubeconfig path last
#   hack/local-cluster.sh up --real-node   the same plus a real node (containerd, kubelet, CNI,
#                                  CoreDNS, local images) beside the KWOK nodes; see lib/realnode.sh
#   hack/local-cluster.sh up --addons kueue,volcano,scheduler-plugins,jobset   the same plus
#                                  these addons (any subset; combinable with --real-node; on a
#                                  running cluster, starts those not running yet); see
#                                  lib/addons.sh
#   hack/local-cluster.sh build-addons ADDON...   build (or reuse) the addons' binaries
#   hack/local-cluster.sh gen-addons [ADDON]...   regenerate their wrapper modules (version bumps)
#   hack/local-cluster.sh down     stop the processes `up` started and remove the cluster state
#   hack/local-cluster.sh status   say whether the cluster is running, and its addons
#   hack/local-cluster.sh env      print `export KUBECONFIG=...` for a running cluster
#   hack/local-cluster.sh stop|start|restart COMPONENT   (etcd, kube-apiserver, kwok, ...,
#                                  and the addons' processes: kueue, volcano-scheduler, ...)
#   hack/local-cluster.sh compact  compact etcd at its current revision (prints it)
#
# Environment: MPI_CONTROLLER_CACHE (default ~/.cache/mpi-controller) holds binaries;
# MPI_CONTROLLER_CLUSTER_DIR (default $MPI_CONTROLLER_CACHE/cluster) holds state, pki and logs.
# MPI_CONTROLLER_K8S=oldest runs K8S_OLDEST_VERSION's control plane (hack/versions.env).
set -euo pipefail
HACK=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$HACK/versions.env"
CACHE=${MPI_CONTROLLER_CACHE:-$HOME/.cache/mpi-controller}
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo nogo)
# MPI_CONTROLLER_K8S=oldest: the control plane of K8S_OLDEST_VERSION (its own wrapper module and
# binaries) instead of K8S_VERSION; the real node and the addons stay on K8S_VERSION's builds.
K8S_MODULE=kubernetes
case ${MPI_CONTROLLER_K8S:-} in
  "") ;;
  oldest)  # etcd and KWOK are the same versions: copied from K8S_VERSION's cache when built
    SHARED_BIN_DIR=$CACHE/bin/k8s-v$K8S_VERSION-etcd-v$ETCD_VERSION-kwok-v$KWOK_VERSION-$GO_VERSION
    K8S_VERSION=$K8S_OLDEST_VERSION K8S_MODULE=kubernetes-oldest ;;
  *) echo "MPI_CONTROLLER_K8S: unknown value '$MPI_CONTROLLER_K8S' (empty or oldest)" >&2; exit 2 ;;
esac
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
# shellcheck source=lib/addons.sh
source "$HACK/lib/addons.sh"
# shellcheck disable=SC2034  # read by cluster_down (lib/cluster.sh)
CLUSTER_PRE_DOWN_HOOK=realnode_down

case "${1:-}" in
  build) build_all ;;
  up)
    shift
    real_node="" addons=()
    while (($#)); do
      case $1 in
        --real-node) real_node=1 ;;
        --addons) list=$(addons_parse "${2:-}") || exit 2; mapfile -t addons <<<"$list"; shift ;;
        --addons=*) list=$(addons_parse "${1#--addons=}") || exit 2; mapfile -t addons <<<"$list" ;;
        *) echo "unknown option $1 (up [--real-node] [--addons a,b,...])" >&2; exit 2 ;;
      esac
      shift
    done
    if [[ -n ${MPI_CONTROLLER_K8S:-} && ( -n $real_node || ${#addons[@]} -gt 0 ) ]]; then
      echo "MPI_CONTROLLER_K8S=$MPI_CONTROLLER_K8S runs the control plane alone (no --real-node, --addons)" >&2
      exit 2
    fi
    if [[ -n $real_node ]]; then realnode_requirements; fi
    build_all
    if [[ -n $real_node ]]; then realnode_build; fi
    addons_build "${addons[@]}"
    if [[ -n $real_node ]]; then realnode_configure; fi
    cluster_up >/dev/null  # it prints the kubeconfig path: printed last, below
    if [[ -n $real_node ]]; then realnode_up; fi
    if ((${#addons[@]})); then addons_up "${addons[@]}"; fi
    echo "$STATE/kubeconfig" ;;
  build-addons | gen-addons)
    command=$1; shift
    for addon in "${@:-${ADDONS[@]}}"; do addon_module "$addon" >/dev/null || exit 2; done
    for addon in "${@:-${ADDONS[@]}}"; do
      if [[ $command == build-addons ]]; then build_addon "$addon"; else gen_addon_module "$addon"; fi
    done ;;
  build-real-node) realnode_requirements && build_all && realnode_build ;;
  real-node-check) realnode_check ;;
  real-node-uncached) realnode_uncached ;;
  down) cluster_down ;;
  status) cluster_status; realnode_status; addons_status ;;
  start | stop | restart)
    if addon_of_process "${2:?component name}" >/dev/null; then addon_component_cmd "$1" "$2"
    else component_cmd "$1" "$2"; fi ;;
  compact) etcd_compact ;;
  env) echo "export KUBECONFIG=$STATE/kubeconfig" ;;
  bin-dir) echo "$BIN_DIR" ;;
  *) awk 'NR>1 && /^#/ {sub(/^# ?/, ""); print; next} NR>1 {exit}' "$0"; exit 2 ;;
esac

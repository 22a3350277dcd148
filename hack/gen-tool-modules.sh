#!/usr/bin/env bash
# Regenerates the wrapper Go modules under hack/tools/ for the versions in hack/versions.env.
# The wrappers exist because k8s.io/kubernetes and etcd's server module carry local `replace`
# directives, so `go install pkg@version` refuses them. Run this only when bumping a version;
# the committed go.mod/go.sum make ordinary builds reproducible.
set -euo pipefail
HACK=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$HACK/versions.env"
export GOTOOLCHAIN=local GOFLAGS=

gen_k8s_wrapper() {  # gen_k8s_wrapper NAME CMD...: a wrapper module building k8s.io/kubernetes/cmd/CMD
  local name=$1; shift
  local dir=$HACK/tools/$name
  rm -f "$dir/go.mod" "$dir/go.sum"
  (cd "$dir"
   go mod init "mpi-controller/hack/tools/$name" >/dev/null 2>&1
   go mod edit -go=1.26.0 -godebug=default=go1.26
   local gomod
   gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
   local m
   for m in $(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\1#p' "$gomod"); do
     go mod edit -replace="$m=$m@v0.${K8S_VERSION#1.}"
   done
   local cmd
   for cmd in "$@"; do go get "k8s.io/kubernetes/cmd/$cmd@v$K8S_VERSION"; done)
}

gen_kubernetes() { gen_k8s_wrapper kubernetes kube-apiserver kube-controller-manager kube-scheduler kubectl; }

# The control plane of the oldest claimed release (K8S_OLDEST_VERSION), for make test-oldest-k8s.
gen_kubernetes_oldest() {
  K8S_VERSION=$K8S_OLDEST_VERSION gen_k8s_wrapper kubernetes-oldest kube-apiserver \
    kube-controller-manager kube-scheduler kubectl
}

# The real node's binaries: their own module, since they need modules the control plane does not.
gen_kubelet() { gen_k8s_wrapper kubelet kubelet kube-proxy; }

gen_coredns() {  # hack/tools/coredns/main.go picks the plugins; this pins CoreDNS itself
  (cd "$HACK/tools/coredns"
   rm -f go.mod go.sum
   go mod init mpi-controller/hack/tools/coredns >/dev/null 2>&1
   go mod edit -go=1.26.0
   go get "github.com/coredns/coredns@v$COREDNS_VERSION"
   go mod tidy)
}

gen_etcd() {
  local dir=$HACK/tools/etcd
  rm -f "$dir/go.mod" "$dir/go.sum"
  (cd "$dir"
   go mod init mpi-controller/hack/tools/etcd >/dev/null 2>&1
   go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" "go.etcd.io/etcd/etcdctl/v3@v$ETCD_VERSION")
}

gen_kwok() {
  local dir=$HACK/tools/kwok
  rm -f "$dir/go.mod" "$dir/go.sum"
  (cd "$dir"
   go mod init mpi-controller/hack/tools/kwok >/dev/null 2>&1
   go get "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION")
}

for t in "${@:-kubernetes etcd kwok kubelet coredns}"; do
  for x in $t; do "gen_$x"; done
done

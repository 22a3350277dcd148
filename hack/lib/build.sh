# Builds the local control plane binaries from the Go module proxy into a cache outside the repo.
# Sourced by hack/local-cluster.sh. Every binary is skipped when its cached copy exists; the cache
# directory is keyed by the pinned versions and the Go version, so a bump builds afresh.
# shellcheck shell=bash

build_one() {  # build_one NAME MODULE_DIR LDFLAGS PACKAGE...
  local name=$1 dir=$2 ldflags=$3; shift 3
  if [[ -x $BIN_DIR/$name ]]; then
    return 0
  fi
  local start=$SECONDS
  echo "building $name (cold builds take minutes; output cached in $BIN_DIR)" >&2
  (cd "$dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS= go build -trimpath -tags=selinux,notest \
     -ldflags="$ldflags" -o "$BIN_DIR/$name.tmp" "$@")
  mv "$BIN_DIR/$name.tmp" "$BIN_DIR/$name"
  echo "built $name in $((SECONDS - start))s" >&2
}

k8s_ldflags() {
  local minor; minor=$(cut -d. -f2 <<<"$K8S_VERSION")
  local ldf="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldf+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ldf"
}

build_all() {
  mkdir -p "$BIN_DIR"
  local shared
  for shared in etcd kwok; do  # SHARED_BIN_DIR: a cache holding the same etcd and KWOK builds
    if [[ -n ${SHARED_BIN_DIR:-} && ! -x $BIN_DIR/$shared && -x $SHARED_BIN_DIR/$shared ]]; then
      cp "$SHARED_BIN_DIR/$shared" "$BIN_DIR/$shared"
    fi
  done
  local k8s=$HACK/tools/${K8S_MODULE:-kubernetes}
  build_one etcd "$HACK/tools/etcd" "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=v$ETCD_VERSION" \
    go.etcd.io/etcd/server/v3
  build_one kube-apiserver "$k8s" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kube-apiserver
  build_one kube-controller-manager "$k8s" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kube-controller-manager
  build_one kube-scheduler "$k8s" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kube-scheduler
  build_one kubectl "$k8s" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kubectl
  build_one kwok "$HACK/tools/kwok" "-s -w" sigs.k8s.io/kwok/cmd/kwok
}

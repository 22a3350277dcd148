# Starts, stops and inspects the local control plane. Sourced by hack/local-cluster.sh, which
# sets HACK, BIN_DIR, STATE and the versions.
#
# State directory layout ($STATE):
#   pki/            CA, serving certificate, service-account key (openssl)
#   tokens.csv      static tokens: admin (system:masters) and controller identities
#   kubeconfig      admin kubeconfig; kubeconfig-controller: the "mpi-controller" user
#   ports.env       the free ports chosen by `up`
#   run/NAME.sh     the exact command line of each component (used by start/restart)
#   pids/NAME.pid   the pid of each component that `up` started
#   logs/NAME.log   each component's output; logs/audit.log: requests of controller identities
# shellcheck shell=bash

COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
NODES=${MPI_CONTROLLER_NODES:-4}

log() { echo "[local-cluster] $*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

pid_alive() {  # pid_alive NAME
  local f=$STATE/pids/$1.pid
  [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

wait_until() {  # wait_until SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out waiting for $what; logs in $STATE/logs"
      return 1
    fi
    sleep 0.2
  done
}

gen_pki() {
  local pki=$STATE/pki
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=mpi-controller-local-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc%s\nextendedKeyUsage=serverAuth\n' \
    "${API_EXTRA_SANS:+,$API_EXTRA_SANS}" >"$pki/apiserver.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 3650 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

gen_tokens() {
  local admin controller controller2
  admin=$(openssl rand -hex 24); controller=$(openssl rand -hex 24); controller2=$(openssl rand -hex 24)
  cat >"$STATE/tokens.csv" <<EOF
$admin,admin,admin-uid,"system:masters"
$controller,mpi-controller,mpi-controller-uid,"system:masters"
$controller2,mpi-controller-2,mpi-controller-2-uid,"system:masters"
EOF
  write_kubeconfig "$STATE/kubeconfig" admin "$admin"
  write_kubeconfig "$STATE/kubeconfig-controller" mpi-controller "$controller"
  write_kubeconfig "$STATE/kubeconfig-controller-2" mpi-controller-2 "$controller2"
}

write_kubeconfig() {  # write_kubeconfig PATH USER TOKEN
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $STATE/pki/ca.crt
users:
- name: $2
  user:
    token: $3
contexts:
- name: local
  context:
    cluster: local
    user: $2
current-context: local
EOF
  chmod 600 "$1"
}

write_configs() {
  cat >"$STATE/audit-policy.yaml" <<'EOF'
# Requests of the controller identities (users and the in-cluster service account) are logged at
# Metadata level so benchmarks and fault runs can count them, and so are execs into pods (whoever
# makes them: MPIJob v1 launchers start their ranks by `kubectl exec`); nothing else is logged.
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [mpi-controller, mpi-controller-2, "system:serviceaccount:mpi-operator:mpi-operator"]
- level: Metadata
  resources: [{group: "", resources: [pods/exec]}]
- level: None
EOF
  cat >"$STATE/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $STATE/kubeconfig
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
EOF
  write_kwok_config
}

# KWOK's configuration: upstream's fast node and pod stages, then ours (hack/kwok/stages.yaml).
write_kwok_config() {
  local kwok_dir
  kwok_dir=$(cd "$HACK/tools/kwok" && GOFLAGS= go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  {
    printf 'apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions:\n  podPlayStageParallelism: 16\n  nodePlayStageParallelism: 4\n  nodeLeaseParallelism: 4\n  podsOnNodeSyncParallelism: 4\n'
    local f
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
      printf -- '---\n'; cat "$kwok_dir/kustomize/stage/$f"
    done
    printf -- '---\n'; cat "$HACK/kwok/stages.yaml"
  } >"$STATE/kwok.yaml"
  stages_digest >"$STATE/kwok-stages.sha256"
}

stages_digest() { sha256sum "$HACK/kwok/stages.yaml" | cut -d' ' -f1; }

write_run_scripts() {
  local r=$STATE/run b=$BIN_DIR kc=$STATE/kubeconfig
  mkdir -p "$r"
  cat >"$r/etcd.sh" <<EOF
exec $b/etcd --name local --data-dir $STATE/etcd \
  --listen-client-urls http://127.0.0.1:$ETCD_PORT --advertise-client-urls http://127.0.0.1:$ETCD_PORT \
  --listen-peer-urls http://127.0.0.1:$ETCD_PEER_PORT \
  --initial-advertise-peer-urls http://127.0.0.1:$ETCD_PEER_PORT \
  --initial-cluster local=http://127.0.0.1:$ETCD_PEER_PORT \
  --listen-metrics-urls http://127.0.0.1:$ETCD_METRICS_PORT \
  --unsafe-no-fsync=true --quota-backend-bytes=8589934592
EOF
  cat >"$r/kube-apiserver.sh" <<EOF
exec $b/kube-apiserver --etcd-servers=http://127.0.0.1:$ETCD_PORT \
  --bind-address=${API_BIND_ADDRESS:-127.0.0.1} --secure-port=$API_PORT --advertise-address=127.0.0.1 \
  --tls-cert-file=$STATE/pki/apiserver.crt --tls-private-key-file=$STATE/pki/apiserver.key \
  --client-ca-file=$STATE/pki/ca.crt --token-auth-file=$STATE/tokens.csv \
  --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file=$STATE/pki/sa.pub --service-account-signing-key-file=$STATE/pki/sa.key \
  --service-cluster-ip-range=10.96.0.0/16 --allow-privileged=true --endpoint-reconciler-type=none \
  --enable-admission-plugins=OwnerReferencesPermissionEnforcement \
  --audit-policy-file=$STATE/audit-policy.yaml --audit-log-path=$STATE/logs/audit.log \
  --audit-log-maxsize=500 --audit-log-maxbackup=1 --audit-log-mode=batch ${API_EXTRA_FLAGS:-} \
  \${KUBE_APISERVER_EXTRA_ARGS:---enable-priority-and-fairness=false --max-requests-inflight=0 --max-mutating-requests-inflight=0}
EOF
  cat >"$r/kube-controller-manager.sh" <<EOF
exec $b/kube-controller-manager --kubeconfig=$kc \
  --authentication-kubeconfig=$kc --authorization-kubeconfig=$kc \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port=$KCM_PORT \
  --controllers=job-controller,statefulset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,ttl-after-finished-controller,pod-garbage-collector-controller,node-lifecycle-controller,root-ca-certificate-publisher-controller,horizontal-pod-autoscaler-controller${KCM_EXTRA_CONTROLLERS:+,$KCM_EXTRA_CONTROLLERS} \
  --horizontal-pod-autoscaler-sync-period=5s \
  --root-ca-file=$STATE/pki/ca.crt --service-account-private-key-file=$STATE/pki/sa.key \
  --kube-api-qps=1000 --kube-api-burst=2000 --concurrent-job-syncs=20 --concurrent-gc-syncs=40
EOF
  cat >"$r/kube-scheduler.sh" <<EOF
exec $b/kube-scheduler --config=$STATE/scheduler.yaml \
  --authentication-kubeconfig=$kc --authorization-kubeconfig=$kc \
  --bind-address=127.0.0.1 --secure-port=$SCHED_PORT
EOF
  cat >"$r/kwok.sh" <<EOF
exec $b/kwok --kubeconfig=$kc --config=$STATE/kwok.yaml \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --cidr=10.244.0.0/16 --node-ip=10.244.0.1 --node-lease-duration-seconds=40 \
  --server-address=127.0.0.1:$KWOK_PORT
EOF
}

start_component() {  # start_component NAME
  local name=$1
  if pid_alive "$name"; then return 0; fi
  mkdir -p "$STATE/pids" "$STATE/logs"
  setsid bash "$STATE/run/$name.sh" >>"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name.pid"
}

stop_component() {  # stop_component NAME: SIGTERM, then SIGKILL after 10 s
  local name=$1 f=$STATE/pids/$1.pid pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$f"
}

kubectl_() { "$BIN_DIR/kubectl" --kubeconfig="$STATE/kubeconfig" "$@"; }

api_ready() { curl -sf --cacert "$STATE/pki/ca.crt" "https://127.0.0.1:$API_PORT/readyz" | grep -q ok; }
etcd_ready() { curl -sf "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
kcm_ready() { curl -sk "https://127.0.0.1:$KCM_PORT/healthz" | grep -q ok; }
sched_ready() { curl -sk "https://127.0.0.1:$SCHED_PORT/healthz" | grep -q ok; }
kwok_ready() { curl -sf "http://127.0.0.1:$KWOK_PORT/healthz" | grep -q ok; }

wait_component() {  # wait_component NAME
  case $1 in
    etcd) wait_until 60 etcd etcd_ready ;;
    kube-apiserver) wait_until 120 kube-apiserver api_ready ;;
    kube-controller-manager) wait_until 60 kube-controller-manager kcm_ready ;;
    kube-scheduler) wait_until 60 kube-scheduler sched_ready ;;
    kwok) wait_until 60 kwok kwok_ready ;;
  esac
}

all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do pid_alive "$c" || return 1; done
  # shellcheck disable=SC1091
  source "$STATE/ports.env"
  api_ready
}

create_nodes() {
  local i manifest=""
  for ((i = 0; i < NODES; i++)); do
    manifest+="---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: \"0\"}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: \"256\", memory: 2Ti, pods: \"5000\", nvidia.com/gpu: \"8\", ephemeral-storage: 10Ti}
  capacity: {cpu: \"256\", memory: 2Ti, pods: \"5000\", nvidia.com/gpu: \"8\", ephemeral-storage: 10Ti}
"
  done
  kubectl_ apply -f - <<<"$manifest" >/dev/null
}

# KWOK nodes made before they advertised ephemeral-storage (the MPIJob v1 launcher's
# kubectl-delivery init container requests it): an apply leaves a node's status alone, so
# patch the status of those that lack it.
update_node_capacity() {
  local node patch='{"status":{"capacity":{"ephemeral-storage":"10Ti"},"allocatable":{"ephemeral-storage":"10Ti"}}}'
  for node in $(kubectl_ get nodes -l type=kwok --no-headers \
      -o 'custom-columns=NAME:.metadata.name,STORAGE:.status.capacity.ephemeral-storage' |
      awk '$2 == "<none>" {print $1}'); do
    log "node $node lacks ephemeral-storage; adding it"
    kubectl_ patch node "$node" --subresource=status --type=merge -p "$patch" >/dev/null
  done
}

probe_pod_runs() {  # a pod is scheduled onto a fake node and reported Running
  local phase
  phase=$(kubectl_ get pod -n kube-system local-cluster-probe -o 'jsonpath={.status.phase}' 2>/dev/null)
  [[ $phase == Running ]]
}

default_sa() { kubectl_ -n kube-system get serviceaccount default; }

smoke_test() {
  wait_until 60 "the default ServiceAccount" default_sa
  kubectl_ -n kube-system delete pod local-cluster-probe --ignore-not-found --wait=false >/dev/null
  wait_until 60 "the previous probe pod to go" \
    bash -c "! '$BIN_DIR/kubectl' --kubeconfig='$STATE/kubeconfig' -n kube-system get pod local-cluster-probe"
  kubectl_ -n kube-system run local-cluster-probe --image=registry.k8s.io/pause:3.10 --restart=Never \
    >/dev/null
  wait_until 120 "a pod to be scheduled and run" probe_pod_runs
  kubectl_ -n kube-system delete pod local-cluster-probe --wait=false >/dev/null
}

cluster_up() {
  local start=$SECONDS
  if [[ -f $STATE/ports.env ]] && all_running; then
    log "reusing the running cluster (state in $STATE)"
    if [[ $(cat "$STATE/kwok-stages.sha256" 2>/dev/null) != "$(stages_digest)" ]]; then
      # hack/kwok/stages.yaml changed since this cluster started (a checkout of other code):
      # KWOK reads its stages only at start.
      log "KWOK stages changed; restarting kwok with them"
      write_kwok_config
      component_cmd restart kwok
    fi
    local kcm=$STATE/run/kube-controller-manager.sh
    if ! grep -q statefulset-controller "$kcm"; then
      # started before the StatefulSet controller was added (MPIJob v1alpha2 workers); the
      # rest of its flags (a real node's extra controllers) stay as they are
      log "kube-controller-manager lacks the StatefulSet controller; restarting it with it"
      sed -i 's/--controllers=job-controller,/--controllers=job-controller,statefulset-controller,/' "$kcm"
      component_cmd restart kube-controller-manager
    fi
    update_node_capacity
    echo "$STATE/kubeconfig"
    return 0
  fi
  if [[ -d $STATE ]]; then
    log "found a stale or partial cluster in $STATE; removing it"
    cluster_down >/dev/null
  fi
  mkdir -p "$STATE/logs" "$STATE/pids"
  {
    echo "ETCD_PORT=$(free_port)"; echo "ETCD_PEER_PORT=$(free_port)"; echo "ETCD_METRICS_PORT=$(free_port)"
    echo "API_PORT=$(free_port)"; echo "KCM_PORT=$(free_port)"; echo "SCHED_PORT=$(free_port)"
    echo "KWOK_PORT=$(free_port)"
  } >"$STATE/ports.env"
  # shellcheck disable=SC1091
  source "$STATE/ports.env"
  gen_pki
  gen_tokens
  write_configs
  "${CLUSTER_PRE_START_HOOK:-:}"  # e.g. the real node's certificates and bridge
  write_run_scripts
  local c
  for c in "${COMPONENTS[@]}"; do
    start_component "$c"
    wait_component "$c" || { tail -n 20 "$STATE/logs/$c.log" >&2; stop_all; return 1; }
    log "$c is up (pid $(cat "$STATE/pids/$c.pid"))"
  done
  create_nodes
  smoke_test || { log "the cluster did not run a pod; see $STATE/logs"; return 1; }
  log "cluster ready in $((SECONDS - start))s: API server https://127.0.0.1:$API_PORT, $NODES KWOK nodes"
  log "component logs: $STATE/logs/"
  log "use it with: export KUBECONFIG=$STATE/kubeconfig"
  echo "$STATE/kubeconfig"
}

stop_all() {  # stops every process started beside or as part of the cluster; keeps the state
  local i f
  # Processes started beside the cluster (the demo's controller) go first.
  for f in "$STATE"/pids/*.pid; do
    [[ -e $f ]] || continue
    local name; name=$(basename "$f" .pid)
    [[ " ${COMPONENTS[*]} " == *" $name "* ]] || stop_component "$name"
  done
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop_component "${COMPONENTS[i]}"; done
}

cluster_down() {
  "${CLUSTER_PRE_DOWN_HOOK:-:}"  # e.g. the real node's pods, mounts and network go first
  stop_all
  rm -rf "$STATE"
  log "cluster stopped and its state removed"
}

cluster_status() {
  if [[ -f $STATE/ports.env ]] && all_running; then
    echo "running: API server https://127.0.0.1:$API_PORT, kubeconfig $STATE/kubeconfig"
  else
    echo "not running"
    return 1
  fi
}

require_state() {
  [[ -f $STATE/ports.env ]] || { log "no cluster in $STATE; run 'up' first"; exit 1; }
  # shellcheck disable=SC1091
  source "$STATE/ports.env"
}

component_cmd() {  # component_cmd start|stop|restart NAME
  require_state
  local action=$1 name=$2
  [[ " ${COMPONENTS[*]} " == *" $name "* ]] || { log "unknown component $name"; exit 2; }
  case $action in
    stop) stop_component "$name" ;;
    start) start_component "$name"; wait_component "$name" ;;
    restart) stop_component "$name"; start_component "$name"; wait_component "$name" ;;
  esac
}

etcd_compact() {  # compacts etcd at its current revision and prints the revision
  require_state
  local rev answer
  rev=$(curl -sf -X POST -d '{"key":"AA=="}' "http://127.0.0.1:$ETCD_PORT/v3/kv/range" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
  # A revision that is already compacted (nothing written since the last compaction, or the
  # API server's own periodic compaction came first) is what was asked for: not an error.
  answer=$(curl -s -X POST -d "{\"revision\":\"$rev\",\"physical\":true}" \
    "http://127.0.0.1:$ETCD_PORT/v3/kv/compaction")
  if [[ $answer == *'"error"'* && $answer != *"required revision has been compacted"* ]]; then
    log "etcd compaction at revision $rev failed: $answer"
    return 1
  fi
  echo "$rev"
}

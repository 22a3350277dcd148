# The real node of the local cluster (hack/local-cluster.sh up --real-node): containerd + runc, a
# CNI bridge, kubelet and kube-proxy built from the pinned Kubernetes modules, and CoreDNS serving
# the cluster domain, all run as root processes of this machine beside the control plane. The
# node registers as $RN_NODE, labelled and tainted mpi-controller.io/real-node=true:NoSchedule, so
# only pods that tolerate the taint run there; the KWOK nodes keep serving everything else.
# Sourced by hack/local-cluster.sh (HACK, CACHE, BIN_DIR, STATE, versions set).
#
# Network: the bridge $RN_BRIDGE holds $RN_GATEWAY (the node's IP, where the API server, kubelet
# and CoreDNS listen) and pods get addresses in $RN_SUBNET (no masquerading: pods reach the host
# and each other, nothing else). kube-proxy routes the `kubernetes` Service (10.96.0.1:443) to
# the API server; CoreDNS answers for cluster.local at $RN_GATEWAY:53.
#
# State ($STATE/realnode): pki-signed kubeconfigs, configs, containerd's and kubelet's roots,
# pod logs, pids/, run/ (command lines), images.env (the image names for tests), sysctl.saved
# (kernel settings kubelet and kube-proxy change, restored by `down`). Logs: $STATE/logs/.
# `down` (realnode_down) stops the pods and processes and removes the mounts, network
# namespaces, bridge, iptables rules, cgroups and state it made.
# shellcheck shell=bash

RN=$STATE/realnode
RN_NODE=real-node
RN_BRIDGE=${MPI_CONTROLLER_REAL_NODE_BRIDGE:-mpirn0}
RN_SUBNET=10.246.0.0/24
RN_GATEWAY=10.246.0.1
RN_SERVICE_IP=10.96.0.1
RN_LABEL=mpi-controller.io/real-node
RN_COMPONENTS=(containerd coredns kube-proxy kubelet)
RN_PACKAGES=(containerd runc containernetworking-plugins iptables conntrack mmdebstrap buildah)
RN_CNI_BIN=/usr/lib/cni
COREDNS_BIN_DIR=$CACHE/bin/coredns-v$COREDNS_VERSION-$GO_VERSION
# One real node per machine (the bridge, kubepods cgroups and KUBE-* chains are global): this
# file names the state directory of the one that runs.
RN_OWNER=/run/mpi-controller-real-node
# Kernel settings the node's components may change; saved at `up`, restored at `down`.
RN_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet
  net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables)

# shellcheck source=images.sh
source "$HACK/lib/images.sh"

rn_log() { echo "[real-node] $*" >&2; }

# ---- requirements and build -------------------------------------------------------------

realnode_missing() {  # prints why this machine cannot run the real node (nothing when it can)
  [[ $(id -u) == 0 ]] || { echo "the real node needs root (it runs containerd, kubelet, iptables)"; return; }
  [[ -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ]] || { echo "no cgroup hierarchy at /sys/fs/cgroup"; return; }
  grep -qw overlay /proc/filesystems || { echo "the kernel has no overlay filesystem"; return; }
  local missing=() c
  for c in containerd runc iptables conntrack mmdebstrap buildah ctr; do
    command -v "$c" >/dev/null || missing+=("$c")
  done
  [[ -x $RN_CNI_BIN/bridge ]] || missing+=("$RN_CNI_BIN/bridge")
  ((${#missing[@]} == 0)) || echo "missing: ${missing[*]} (Debian packages: ${RN_PACKAGES[*]})"
}

realnode_requirements() {  # installs the Debian packages the real node needs, when it can
  local why
  why=$(realnode_missing)
  if [[ $why == missing:* ]] && command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    rn_log "installing ${RN_PACKAGES[*]} (Debian packages)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${RN_PACKAGES[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 \
           && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${RN_PACKAGES[@]}" >/dev/null 2>&1; } \
      || true
    why=$(realnode_missing)
  fi
  [[ -z $why ]] || { rn_log "cannot run the real node here: $why"; return 1; }
}

realnode_owner() {  # the state directory of the real node running on this machine, if any
  local owner
  owner=$(cat "$RN_OWNER" 2>/dev/null) || return 0
  [[ -d $owner/realnode ]] && echo "$owner"
  return 0
}

realnode_check() {  # succeeds when a real node can run here (installing packages); else says why
  realnode_requirements 2>&1 || return 1
  local owner
  owner=$(realnode_owner)
  if [[ -n $owner && $owner != "$STATE" ]]; then
    echo "another real node runs on this machine (state in $owner)"
    return 1
  fi
}

realnode_uncached() {  # what `realnode_build` would still have to build, bar the controller image
  # (rebuilt from the sources on every change to them, in well under a minute)
  local missing=() b n
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kubelet kube-proxy; do
    [[ -x $BIN_DIR/$b ]] || missing+=("$b")
  done
  [[ -x $COREDNS_BIN_DIR/coredns ]] || missing+=(coredns)
  for n in "${IMAGE_NAMES[@]}"; do
    image_wanted "$n" || continue
    [[ $n == controller || -f $(image_archive "$n") ]] || missing+=("image $n")
  done
  echo "${missing[*]}"
}

realnode_build() {  # kubelet, kube-proxy, CoreDNS and the images, each skipped when cached
  local k8s=$HACK/tools/kubelet
  build_one kubelet "$k8s" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kubelet
  build_one kube-proxy "$k8s" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kube-proxy
  mkdir -p "$COREDNS_BIN_DIR"
  BIN_DIR=$COREDNS_BIN_DIR build_one coredns "$HACK/tools/coredns" \
    "-s -w -X github.com/coredns/coredns/coremain.GitCommit=v$COREDNS_VERSION" .
  build_images
}

# ---- the control plane's part (called by cluster_up through CLUSTER_PRE_START_HOOK) ------

realnode_configure() {  # the API server settings the real node needs; call before cluster_up
  export API_BIND_ADDRESS=0.0.0.0
  export API_EXTRA_SANS="IP:$RN_SERVICE_IP,IP:$RN_GATEWAY"
  export API_EXTRA_FLAGS="--kubelet-client-certificate=$STATE/pki/kubelet-client.crt --kubelet-client-key=$STATE/pki/kubelet-client.key --kubelet-certificate-authority=$STATE/pki/ca.crt --kubelet-preferred-address-types=InternalIP"
  export KCM_EXTRA_CONTROLLERS=endpointslice-controller,deployment-controller,replicaset-controller
  # shellcheck disable=SC2034  # read by cluster_up (lib/cluster.sh)
  CLUSTER_PRE_START_HOOK=realnode_pre_start
}

signed_cert() {  # signed_cert NAME SUBJECT EXTENSIONS: pki/NAME.{key,crt} signed by the cluster CA
  local pki=$STATE/pki
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -extfile <(printf '%s\n' "$3") -out "$pki/$1.crt" 2>/dev/null
}

client_cert() {  # client_cert NAME CN [ORG]: a client certificate signed by the cluster CA
  local subj="/CN=$2"
  [[ -z ${3:-} ]] || subj="/O=$3$subj"
  signed_cert "$1" "$subj" extendedKeyUsage=clientAuth
}

cert_kubeconfig() {  # cert_kubeconfig PATH NAME: a kubeconfig that authenticates with pki/NAME.crt
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$STATE/pki/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$STATE/pki/$2.crt", client-key: "$STATE/pki/$2.key"}
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
EOF
  chmod 600 "$1"
}

realnode_pre_start() {  # after the PKI exists, before the API server starts
  local why
  why=$(realnode_check) || { rn_log "$why"; return 1; }
  echo "$STATE" >"$RN_OWNER"
  realnode_network_up
  client_cert kubelet-client kube-apiserver-kubelet-client system:masters
  client_cert kubelet "system:node:$RN_NODE" system:nodes
  # The kubelet's serving certificate, which the API server verifies (exec, logs, port-forward).
  signed_cert kubelet-serving "/O=system:nodes/CN=system:node:$RN_NODE" \
    "$(printf 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:%s,DNS:%s' "$RN_GATEWAY" "$RN_NODE")"
  client_cert kube-proxy system:kube-proxy
  client_cert coredns system:coredns
  echo "RN_NODE=$RN_NODE" >"$STATE/real-node.env"
}

# ---- network ----------------------------------------------------------------------------

realnode_network_up() {
  mkdir -p "$RN"
  [[ -f $RN/sysctl.saved ]] || sysctl -e "${RN_SYSCTLS[@]}" >"$RN/sysctl.saved" 2>/dev/null
  [[ -f $RN/iptables.before ]] || iptables-save >"$RN/iptables.before" 2>/dev/null || true
  [[ -f $RN/ip6tables.before ]] || ip6tables-save >"$RN/ip6tables.before" 2>/dev/null || true
  if ! ip link show "$RN_BRIDGE" >/dev/null 2>&1; then
    ip link add "$RN_BRIDGE" type bridge
    ip addr add "$RN_GATEWAY/${RN_SUBNET#*/}" dev "$RN_BRIDGE"
  fi
  ip link set "$RN_BRIDGE" up
}

realnode_network_down() {
  if ip link show "$RN_BRIDGE" >/dev/null 2>&1; then ip link del "$RN_BRIDGE"; fi
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do  # pods' namespaces left behind
    if ip -n "$ns" -4 addr 2>/dev/null | grep -q "inet ${RN_SUBNET%.*}\."; then
      ip netns delete "$ns" 2>/dev/null || true
    fi
  done
  if [[ -f $RN/sysctl.saved ]]; then
    local key value
    while IFS=' =' read -r key value; do
      if [[ -n $key ]]; then sysctl -q -w "$key=$value" >/dev/null 2>&1 || true; fi
    done <"$RN/sysctl.saved"
  fi
}

# ---- components -------------------------------------------------------------------------

rn_pid_alive() { [[ -f $RN/pids/$1.pid ]] && kill -0 "$(cat "$RN/pids/$1.pid")" 2>/dev/null; }

rn_start() {  # rn_start NAME: runs $RN/run/NAME.sh in its own session, logs to $STATE/logs
  rn_pid_alive "$1" && return 0
  mkdir -p "$RN/pids" "$STATE/logs"
  setsid bash "$RN/run/$1.sh" >>"$STATE/logs/$1.log" 2>&1 </dev/null &
  echo $! >"$RN/pids/$1.pid"
}

rn_stop() {  # rn_stop NAME: SIGTERM, then SIGKILL after 10 s
  local f=$RN/pids/$1.pid pid i
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

realnode_write_configs() {
  local kubelet_port healthz_port proxy_healthz proxy_metrics dns_health dns_ready
  kubelet_port=$(free_port); healthz_port=$(free_port); proxy_healthz=$(free_port)
  proxy_metrics=$(free_port); dns_health=$(free_port); dns_ready=$(free_port)
  printf 'KUBELET_HEALTHZ_PORT=%s\nPROXY_HEALTHZ_PORT=%s\nDNS_READY_PORT=%s\n' \
    "$healthz_port" "$proxy_healthz" "$dns_ready" >"$RN/ports.env"
  mkdir -p "$RN/run" "$RN/cni" "$RN/pod-logs"
  cert_kubeconfig "$RN/kubelet.kubeconfig" kubelet
  cert_kubeconfig "$RN/kube-proxy.kubeconfig" kube-proxy
  cert_kubeconfig "$RN/coredns.kubeconfig" coredns
  cat >"$RN/containerd.toml" <<EOF
version = 2
root = "$RN/containerd/root"
state = "$RN/containerd/state"
[grpc]
  address = "$RN/containerd.sock"
[ttrpc]
  address = "$RN/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$(image_ref pause)"
  enable_selinux = false
  netns_mounts_under_state_dir = true
  # This machine may deny CAP_SYS_RESOURCE (then no process may lower its oom_score_adj, and runc
  # fails on the sandbox's -998): keep containers' scores at or above containerd's own.
  restrict_oom_score_adj = $(has_cap_sys_resource && echo false || echo true)
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$RN/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$RN_CNI_BIN"
    conf_dir = "$RN/cni/net.d"
EOF
  mkdir -p "$RN/cni/net.d"
  cat >"$RN/cni/net.d/10-real-node.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "real-node",
  "plugins": [{
    "type": "bridge", "bridge": "$RN_BRIDGE", "isDefaultGateway": true, "ipMasq": false,
    "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$RN/cni/ipam",
             "ranges": [[{"subnet": "$RN_SUBNET", "gateway": "$RN_GATEWAY"}]]}
  }]
}
EOF
  : >"$RN/resolv.conf"
  cat >"$RN/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $RN_GATEWAY
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$STATE/pki/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: $STATE/pki/kubelet-serving.crt
tlsPrivateKeyFile: $STATE/pki/kubelet-serving.key
containerRuntimeEndpoint: unix://$RN/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
clusterDomain: cluster.local
clusterDNS: [$RN_GATEWAY]
resolvConf: $RN/resolv.conf
podLogsDir: $RN/pod-logs
registerWithTaints:
- {key: $RN_LABEL, value: "true", effect: NoSchedule}
evictionHard: {memory.available: 100Mi}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 50
serializeImagePulls: false
EOF
  cat >"$RN/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$RN/kube-proxy.kubeconfig"}
hostnameOverride: $RN_NODE
mode: iptables
clusterCIDR: $RN_SUBNET
bindAddress: $RN_GATEWAY
healthzBindAddress: 127.0.0.1:$proxy_healthz
metricsBindAddress: 127.0.0.1:$proxy_metrics
nodePortAddresses: ["$RN_GATEWAY/32"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  cat >"$RN/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
  bind $RN_GATEWAY
  errors
  health 127.0.0.1:$dns_health
  ready 127.0.0.1:$dns_ready
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig $RN/coredns.kubeconfig local
    pods insecure
  }
}
EOF
  cat >"$RN/run/containerd.sh" <<EOF
exec $(command -v containerd) --config $RN/containerd.toml
EOF
  cat >"$RN/run/coredns.sh" <<EOF
exec $COREDNS_BIN_DIR/coredns -conf $RN/Corefile
EOF
  cat >"$RN/run/kube-proxy.sh" <<EOF
exec $BIN_DIR/kube-proxy --config=$RN/kube-proxy.yaml
EOF
  cat >"$RN/run/kubelet.sh" <<EOF
exec $BIN_DIR/kubelet --config=$RN/kubelet.yaml --kubeconfig=$RN/kubelet.kubeconfig \
  --root-dir=$RN/kubelet --hostname-override=$RN_NODE --node-ip=$RN_GATEWAY \
  --node-labels=$RN_LABEL=true --v=1
EOF
}

has_cap_sys_resource() {  # CAP_SYS_RESOURCE (bit 24) in this shell's effective set
  local eff
  eff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
  (( (16#$eff >> 24) & 1 ))
}

ctr_() { ctr --address "$RN/containerd.sock" --namespace k8s.io "$@"; }

realnode_rbac() {  # CoreDNS's read access, and the `kubernetes` Service's endpoints
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns"}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: local-cluster}
addressType: IPv4
endpoints:
- addresses: ["$RN_GATEWAY"]
  conditions: {ready: true}
ports:
- {name: https, port: $API_PORT, protocol: TCP}
EOF
}

kubernetes_service_routed() {
  iptables -t nat -S KUBE-SERVICES 2>/dev/null | grep -q "default/kubernetes:https cluster IP"
}

node_ready() {
  [[ $(kubectl_ get node "$RN_NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

realnode_smoke_test() {  # a pod on the real node runs, resolves a Service name and reaches the API
  kubectl_ -n kube-system delete pod real-node-probe --ignore-not-found --wait=true --timeout=60s >/dev/null
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: real-node-probe, namespace: kube-system}
spec:
  nodeSelector: {$RN_LABEL: "true"}
  tolerations: [{key: $RN_LABEL, operator: Exists, effect: NoSchedule}]
  restartPolicy: Never
  automountServiceAccountToken: false
  containers:
  - name: probe
    image: $(image_ref base)
    command: [python3, -c, "import socket, ssl; a = socket.gethostbyname('kubernetes.default.svc.cluster.local'); s = socket.create_connection((a, 443), timeout=10); print('resolved', a, 'and connected')"]
EOF
  local phase deadline=$((SECONDS + 300))
  while ((SECONDS < deadline)); do
    phase=$(kubectl_ -n kube-system get pod real-node-probe -o 'jsonpath={.status.phase}' 2>/dev/null)
    [[ $phase == Succeeded || $phase == Failed ]] && break
    sleep 0.5
  done
  if [[ $phase != Succeeded ]]; then
    rn_log "the probe pod on the real node ended ${phase:-nowhere}:"
    kubectl_ -n kube-system logs real-node-probe >&2 || true
    kubectl_ -n kube-system describe pod real-node-probe | tail -n 15 >&2 || true
    return 1
  fi
  kubectl_ -n kube-system delete pod real-node-probe --wait=false >/dev/null
}

realnode_up() {  # after cluster_up: starts the node's components and waits for it to be Ready
  local start=$SECONDS
  [[ -f $STATE/real-node.env ]] || {
    rn_log "the cluster in $STATE runs without a real node; run 'hack/local-cluster.sh down' first"
    return 1
  }
  # shellcheck disable=SC1091
  source "$STATE/ports.env"
  if [[ -f $RN/ports.env ]] && all_rn_running && node_ready; then
    rn_log "reusing the running real node $RN_NODE"
    return 0
  fi
  realnode_write_configs
  rn_start containerd
  wait_until 60 containerd ctr_ version || return 1
  local n
  for n in "${IMAGE_NAMES[@]}"; do
    if [[ " ${IMAGE_BASES_ONLY[*]} " == *" $n "* ]] || ! image_wanted "$n"; then continue; fi
    ctr_ images import --no-unpack=false "$(image_archive "$n")" >/dev/null
    echo "$(tr 'a-z-' 'A-Z_' <<<"$n")_IMAGE=$(image_ref "$n")"
  done >"$RN/images.env"
  printf "REAL_NODE=%s\nREAL_NODE_LABEL=%s\n" "$RN_NODE" "$RN_LABEL" >>"$RN/images.env"
  realnode_rbac
  local c
  for c in coredns kube-proxy kubelet; do rn_start "$c"; done
  # shellcheck disable=SC1091
  source "$RN/ports.env"
  wait_until 300 "the real node to be Ready" node_ready || { tail -n 30 "$STATE/logs/kubelet.log" >&2; return 1; }
  wait_until 60 CoreDNS curl -sf "http://127.0.0.1:$DNS_READY_PORT/ready" || return 1
  # A pod's first packet to the Service before kube-proxy's rule exists would pin an un-NATed
  # conntrack entry: wait for the rule.
  wait_until 120 "kube-proxy's rule for the kubernetes Service" kubernetes_service_routed || return 1
  realnode_smoke_test
  rn_log "real node $RN_NODE ready in $((SECONDS - start))s (taint $RN_LABEL=true:NoSchedule; images in $RN/images.env)"
}

all_rn_running() {
  local c
  for c in "${RN_COMPONENTS[@]}"; do rn_pid_alive "$c" || return 1; done
}

# ---- teardown ---------------------------------------------------------------------------

mounts_under() {  # mount points at or below $1, deepest first
  awk -v p="$(realpath -m "$1")" '$5 == p || index($5, p "/") == 1 {print $5}' /proc/self/mountinfo | sort -r
}

realnode_down() {  # stops the real node (if any) and removes everything it set up
  [[ -d $RN || -f $STATE/real-node.env ]] || return 0
  if rn_pid_alive kubelet && [[ -f $STATE/ports.env ]]; then
    # Let kubelet tear the pods down (CNI DEL, volume unmounts) while it and the API server run.
    # shellcheck disable=SC1091
    source "$STATE/ports.env"
    kubectl_ delete pods --all-namespaces --field-selector "spec.nodeName=$RN_NODE" \
      --grace-period=1 --wait=false >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 60))
    while ((SECONDS < deadline)) && [[ -n $(ctr_ tasks ls -q 2>/dev/null) ]]; do sleep 0.5; done
  fi
  rn_stop kubelet
  rn_stop coredns
  if rn_pid_alive kube-proxy || [[ -f $RN/kube-proxy.yaml ]]; then
    rn_stop kube-proxy
    "$BIN_DIR/kube-proxy" --cleanup >/dev/null 2>&1 || true
  fi
  if rn_pid_alive containerd; then
    local t
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    sleep 1
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1 || true; done
  fi
  rn_stop containerd
  pkill_shims
  realnode_kill_pods
  realnode_network_down
  local m
  for m in $(mounts_under "$RN"); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  realnode_cgroups_down
  realnode_iptables_down
  # containerd's shims keep sockets in /run/containerd whatever its state directory: with no
  # containerd or shim left running on the machine, its sockets and empty directories go.
  if [[ -d /run/containerd ]] && ! pgrep -x containerd >/dev/null \
     && ! pgrep -f "containerd-shim-runc-v2 -namespace" >/dev/null; then
    find /run/containerd -type s -delete
    find /run/containerd -depth -type d -empty -delete
  fi
  if [[ -n $(mounts_under "$RN") ]]; then
    rn_log "mounts remain under $RN, not removing it: $(mounts_under "$RN" | tr '\n' ' ')"
    return 1
  fi
  rm -rf "$RN" "$STATE/real-node.env"
  [[ $(cat "$RN_OWNER" 2>/dev/null) != "$STATE" ]] || rm -f "$RN_OWNER"
  rn_log "real node stopped; its pods, mounts, network and state removed"
}

pkill_shims() {  # shims whose containerd was ours (their command line names our socket)
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $RN/containerd.sock" 2>/dev/null); do
    kill -9 "$pid" 2>/dev/null || true
  done
}

realnode_kill_pods() {  # container processes left in the kubepods cgroups (their shims gone)
  local pid
  find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null \
    | sort -u | while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done || true
}

realnode_cgroups_down() {  # the kubepods cgroups kubelet made (cgroup v1 or v2)
  local d
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d $d ]] || continue
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

realnode_iptables_down() {  # KUBE-* chains (kubelet's, kube-proxy's) that were not there before
  local ipt table chain
  for ipt in iptables ip6tables; do
    for table in filter nat mangle; do
      for chain in $($ipt -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ {print $2}'); do
        if grep -qs -- "^:$chain " "$RN/$ipt.before"; then continue; fi
        $ipt -t "$table" -S 2>/dev/null | awk -v c="$chain" '$1 == "-A" && $0 ~ ("-j " c "( |$)")' \
          | sed 's/^-A/-D/' | while read -r rule; do eval "$ipt -t $table $rule" 2>/dev/null || true; done
        $ipt -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $($ipt -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ {print $2}'); do
        grep -qs -- "^:$chain " "$RN/$ipt.before" || $ipt -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

realnode_status() {
  if [[ -f $RN/ports.env ]] && all_rn_running; then
    echo "real node $RN_NODE: running (images in $RN/images.env)"
  else
    echo "real node: not running"
  fi
}

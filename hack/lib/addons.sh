# Cluster addons: Kueue, Volcano's scheduler, the scheduler-plugins scheduler and the JobSet
# controller, built from the Go module proxy (versions in hack/versions.env, wrapper modules in hack/tools/<addon>/,
# binaries in $CACHE/bin/<addon>-v<version>-<go version>/) and run as processes beside the local
# control plane: `hack/local-cluster.sh up --addons kueue,volcano,scheduler-plugins,jobset` (any subset).
# Sourced by hack/local-cluster.sh after lib/build.sh and lib/cluster.sh (HACK, CACHE, BIN_DIR,
# STATE, GO_VERSION and the versions set).
#
# Every addon's CRDs come from its own module's manifests (read from the Go module cache, never
# copied here) and are applied by `up`. Each process has a run script, pid file and log like the
# control plane's (run/NAME.sh, pids/NAME.pid, logs/NAME.log), so `down` stops it with the rest.
#
#   kueue                         the Kueue manager (batch/job and the kubeflow.org MPIJob, TFJob,
#                                 PyTorchJob, XGBoostJob, PaddleJob and JAXJob integrations); its
#                                 webhooks and the conversion webhooks of its CRDs are URLs at
#                                 https://127.0.0.1:<port>, trusted through a CA made here and
#                                 kept in the Secret its internal certificate manager expects
#   volcano-scheduler             Volcano's vc-scheduler as the scheduler `volcano`
#   scheduler-plugins-scheduler   kube-scheduler with scheduler-plugins' Coscheduling, as the
#                                 scheduler `scheduler-plugins-scheduler`
#   scheduler-plugins-controller  scheduler-plugins' PodGroup (and ElasticQuota) status controller
#   jobset-controller             the JobSet manager (the version Kubeflow Trainer v2.3.0's go.mod
#                                 requires), what a TrainJob runs on; its JobSet and pod webhooks
#                                 are URLs at https://127.0.0.1:<port> with a CA made here, its
#                                 internal certificate manager off
#
# State: $STATE/addons/enabled (the addons `up` started, one a line), $STATE/addons/<addon>/
# (ports.env, configuration, certificates).
# shellcheck shell=bash

ADDONS=(kueue volcano scheduler-plugins jobset)
# shellcheck disable=SC2153  # STATE: set by local-cluster.sh
ADDON_STATE=$STATE/addons
# The kubeflow.org kinds whose Kueue integrations are enabled (framework name kubeflow.org/<kind>).
KUEUE_KUBEFLOW_KINDS=(mpijob tfjob pytorchjob xgboostjob paddlejob jaxjob)
KUEUE_NAMESPACE=kueue-system
# A Python with PyYAML (the project's virtualenv when made) for reading the modules' manifests.
ADDON_PYTHON=$HACK/../.venv/bin/python
[[ -x $ADDON_PYTHON ]] || ADDON_PYTHON=python3

# shellcheck source=addons-gen.sh
source "$HACK/lib/addons-gen.sh"

addon_log() { echo "[addons] $*" >&2; }

addon_module() {
  case $1 in
    kueue) echo sigs.k8s.io/kueue ;;
    volcano) echo volcano.sh/volcano ;;
    scheduler-plugins) echo sigs.k8s.io/scheduler-plugins ;;
    jobset) echo sigs.k8s.io/jobset ;;
    *) addon_log "unknown addon $1 (known: ${ADDONS[*]})"; return 2 ;;
  esac
}

addon_version() {
  case $1 in
    kueue) echo "$KUEUE_VERSION" ;;
    volcano) echo "$VOLCANO_VERSION" ;;
    scheduler-plugins) echo "$SCHEDULER_PLUGINS_VERSION" ;;
    jobset) echo "$JOBSET_VERSION" ;;
    *) addon_log "unknown addon $1 (known: ${ADDONS[*]})"; return 2 ;;
  esac
}

addon_packages() {  # the main packages the wrapper module builds
  case $1 in
    kueue) echo sigs.k8s.io/kueue/cmd/kueue ;;
    volcano) echo volcano.sh/volcano/cmd/scheduler ;;
    scheduler-plugins) echo sigs.k8s.io/scheduler-plugins/cmd/scheduler sigs.k8s.io/scheduler-plugins/cmd/controller ;;
    jobset) echo sigs.k8s.io/jobset ;;
  esac
}

addon_processes() {  # the processes an addon runs (names of run scripts, pid files and logs)
  case $1 in
    kueue) echo kueue ;;
    volcano) echo volcano-scheduler ;;
    scheduler-plugins) echo scheduler-plugins-scheduler scheduler-plugins-controller ;;
    jobset) echo jobset-controller ;;
  esac
}

addon_of_process() {  # addon_of_process NAME: the addon running NAME (fails for other names)
  local addon process
  for addon in "${ADDONS[@]}"; do
    for process in $(addon_processes "$addon"); do
      [[ $process == "$1" ]] && { echo "$addon"; return 0; }
    done
  done
  return 1
}

# shellcheck disable=SC2153  # GO_VERSION: set by local-cluster.sh
addon_bin_dir() { echo "$CACHE/bin/$1-v$(addon_version "$1")-$GO_VERSION"; }

# The module's source tree in the Go module cache (downloaded if needed): CRDs, manifests and
# configurations are read from there.
addon_module_dir() {
  (cd "$HACK/tools/$1" && GOTOOLCHAIN=local GOFLAGS='' go mod download -json "$(addon_module "$1")@v$(addon_version "$1")") \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

addons_parse() {  # addons_parse LIST: the comma-separated addons, checked, one a line
  local list=$1 addon
  [[ -n $list ]] || { addon_log "--addons needs a list, e.g. --addons kueue,volcano"; return 2; }
  for addon in ${list//,/ }; do
    addon_module "$addon" >/dev/null || return 2
    echo "$addon"
  done
}

# ---- build ------------------------------------------------------------------------------------

build_addon() {  # build_addon NAME
  local BIN_DIR; BIN_DIR=$(addon_bin_dir "$1")
  mkdir -p "$BIN_DIR"
  local tools=$HACK/tools/$1 version; version=$(addon_version "$1")
  case $1 in
    kueue)
      build_one kueue "$tools" "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=v$version" \
        sigs.k8s.io/kueue/cmd/kueue ;;
    volcano)
      build_one vc-scheduler "$tools" "-s -w -X volcano.sh/volcano/pkg/version.Version=v$version" \
        volcano.sh/volcano/cmd/scheduler ;;
    scheduler-plugins)
      # The scheduler is kube-scheduler of the Kubernetes release the module pins, stamped with
      # that release as the control plane is: stamped with scheduler-plugins' own v0.x (as its
      # Makefile does), kube-scheduler 1.31+ takes 0.x for its binary and emulation version and
      # turns off every feature gate that has a version (all those of the scheduler).
      local k8s
      k8s=$(sed -n 's#^[[:space:]]*k8s\.io/kubernetes v\([0-9.]*\)\( // indirect\)\{0,1\}$#\1#p' "$tools/go.mod")
      build_one scheduler-plugins-scheduler "$tools" "$(K8S_VERSION=$k8s k8s_ldflags)" \
        sigs.k8s.io/scheduler-plugins/cmd/scheduler
      build_one scheduler-plugins-controller "$tools" \
        "-s -w -X k8s.io/component-base/version.gitVersion=v$version" sigs.k8s.io/scheduler-plugins/cmd/controller ;;
    jobset)
      # The manager is the module's root package (its Makefile builds main.go), stamped as its
      # Makefile stamps a release.
      build_one jobset-controller "$tools" "-s -w -X sigs.k8s.io/jobset/pkg/version.GitVersion=v$version" \
        sigs.k8s.io/jobset ;;
  esac
}

addons_build() {  # addons_build ADDON...: one at a time (each is a large Go build)
  local addon
  for addon in "$@"; do build_addon "$addon"; done
}

# ---- common -----------------------------------------------------------------------------------

addon_ports() {  # addon_ports ADDON VAR...: free ports chosen once per cluster, kept in ports.env
  local addon=$1 var; shift
  local file=$ADDON_STATE/$addon/ports.env
  mkdir -p "$ADDON_STATE/$addon"
  if [[ ! -f $file ]]; then
    for var in "$@"; do echo "$var=$(free_port)"; done >"$file"
  fi
  # shellcheck disable=SC1090
  source "$file"
}

apply_module_crds() {  # apply_module_crds FILE...: server-side apply, then wait until Established
  local file name established
  for file in "$@"; do
    kubectl_ apply --server-side --force-conflicts -f "$file" >/dev/null
  done
  for name in $(kubectl_ get -o name "${@/#/--filename=}"); do
    name=${name#*/}
    established=""
    for _ in $(seq 300); do
      established=$(kubectl_ get crd "$name" \
        -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null || true)
      [[ $established == True ]] && break
      sleep 0.2
    done
    [[ $established == True ]] || { addon_log "crd/$name not Established after 60 s"; return 1; }
  done
}

process_ready() {  # process_ready NAME: its health (or readiness) endpoint answers
  local addon; addon=$(addon_of_process "$1")
  # shellcheck disable=SC1090
  source "$ADDON_STATE/$addon/ports.env"
  case $1 in
    kueue) curl -sf --max-time 2 "http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz" ;;
    volcano-scheduler) curl -sf --max-time 2 "http://127.0.0.1:$VOLCANO_HEALTHZ_PORT/healthz" ;;
    scheduler-plugins-scheduler) curl -skf --max-time 2 "https://127.0.0.1:$SP_SCHEDULER_PORT/healthz" ;;
    scheduler-plugins-controller) curl -sf --max-time 2 "http://127.0.0.1:$SP_CONTROLLER_PROBE_PORT/healthz" ;;
    jobset-controller) curl -sf --max-time 2 "http://127.0.0.1:$JOBSET_HEALTH_PORT/readyz" ;;
  esac
}

start_addon_process() {  # start_addon_process NAME: starts it and waits until it is ready
  local name=$1
  start_component "$name"
  wait_until 120 "$name" process_ready "$name" || { tail -n 30 "$STATE/logs/$name.log" >&2; return 1; }
  addon_log "$name is up (pid $(cat "$STATE/pids/$name.pid"))"
}

# ---- Kueue ------------------------------------------------------------------------------------

kueue_pki() {  # a CA and a serving certificate for 127.0.0.1 and the name Kueue's rotator checks
  local pki=$ADDON_STATE/kueue/pki service=kueue-webhook-service.$KUEUE_NAMESPACE.svc
  [[ -f $pki/tls.crt ]] && return 0
  mkdir -p "$pki" "$ADDON_STATE/kueue/certs"
  # The rotator keeps a CA whose certificate names "kueue-ca" and whose key is PKCS#1, and a
  # serving certificate valid for kueue-webhook-service.<namespace>.svc and this CA for 90 days
  # more; otherwise it makes new ones (without 127.0.0.1) and injects their CA.
  openssl genrsa -traditional -out "$pki/ca.key" 2048 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -days 3650 -subj "/O=kueue/CN=kueue-ca" \
    -addext "subjectAltName=DNS:kueue-ca" -out "$pki/ca.crt" 2>/dev/null
  openssl genrsa -traditional -out "$pki/tls.key" 2048 2>/dev/null
  openssl req -new -key "$pki/tls.key" -subj "/CN=$service" -out "$pki/tls.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' \
    "$service" >"$pki/tls.ext"
  openssl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -extfile "$pki/tls.ext" -out "$pki/tls.crt" 2>/dev/null
  # The webhook server reads its certificate from certDir, where a pod would mount the Secret.
  cp "$pki/tls.crt" "$pki/tls.key" "$ADDON_STATE/kueue/certs/"
}

kueue_secret() {
  local pki=$ADDON_STATE/kueue/pki
  kubectl_ create namespace "$KUEUE_NAMESPACE" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  kubectl_ -n "$KUEUE_NAMESPACE" create secret generic kueue-webhook-server-cert \
    --from-file="$pki/ca.crt" --from-file="$pki/ca.key" --from-file="$pki/tls.crt" \
    --from-file="$pki/tls.key" --dry-run=client -o yaml | kubectl_ apply --server-side --force-conflicts -f - >/dev/null
}

# Kueue's CRDs, with the conversion webhooks its kustomization enables pointed at the URL.
kueue_crds() {  # kueue_crds MODULE_DIR
  local crd=$1/config/components/crd ca plural patch
  # shellcheck disable=SC2046  # file names without spaces
  apply_module_crds $(sed -n 's#^- \(bases/.*\.yaml\)$#'"$crd"'/\1#p' "$crd/kustomization.yaml")
  ca=$(base64 -w0 <"$ADDON_STATE/kueue/pki/ca.crt")
  while read -r plural; do
    patch='{"spec":{"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],'
    patch+='"clientConfig":{"url":"https://127.0.0.1:'$KUEUE_WEBHOOK_PORT'/convert","caBundle":"'$ca'"}}}}}'
    kubectl_ patch crd "$plural.kueue.x-k8s.io" --type merge -p "$patch" >/dev/null
  done < <(sed -n 's#^- path: patches/webhook_in_\(.*\)\.yaml$#\1#p' "$crd/kustomization.yaml")
}

# The module's webhook configurations, named as its kustomization names them (the names the
# certificate rotator looks for), keeping the webhooks of Kueue's own kinds and of the enabled
# integrations, each pointed at https://127.0.0.1:<port><its path> with our CA.
kueue_webhooks() {  # kueue_webhooks MODULE_DIR
  local ca; ca=$(base64 -w0 <"$ADDON_STATE/kueue/pki/ca.crt")
  kubectl_ create --dry-run=client -o json -f "$1/config/components/webhook/manifests.yaml" \
    | python3 -c '
import json, sys
url, ca, kinds = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
allowed = {("batch", "jobs")} | {("kubeflow.org", kind + "s") for kind in kinds}
if sys.argv[4] == "trainjob":
    allowed.add(("trainer.kubeflow.org", "trainjobs"))
TRAINJOB_LABEL = sys.argv[5]
text, objects, decoder = sys.stdin.read(), [], json.JSONDecoder()
position = 0
while text[position:].strip():  # kubectl prints one JSON document per object
    obj, end = decoder.raw_decode(text[position:].lstrip())
    position = len(text) - len(text[position:].lstrip()) + end
    objects.extend(obj.get("items", [obj]))
out = []
for obj in objects:
    if not obj["kind"].endswith("WebhookConfiguration"):
        continue
    obj["metadata"] = {"name": "kueue-" + obj["metadata"]["name"],
                       "labels": {"app.kubernetes.io/name": "kueue"}}
    hooks = []
    for hook in obj["webhooks"]:
        pairs = {(g, r) for rule in hook["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
        if all(g == "kueue.x-k8s.io" or (g, r) in allowed for g, r in pairs):
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": url + path, "caBundle": ca}
            if ("trainer.kubeflow.org", "trainjobs") in pairs:
                # Only where a namespace asks for them (see kueue_trainjob).
                selector = hook.setdefault("namespaceSelector", {})
                selector.setdefault("matchLabels", {})[TRAINJOB_LABEL] = "true"
            hooks.append(hook)
    obj["webhooks"] = hooks
    out.append(obj)
json.dump({"apiVersion": "v1", "kind": "List", "items": out}, sys.stdout)
' "https://127.0.0.1:$KUEUE_WEBHOOK_PORT" "$ca" "$(IFS=,; echo "${KUEUE_KUBEFLOW_KINDS[*]}")" \
    "$(kueue_trainjob && echo trainjob)" "$KUEUE_TRAINJOB_NAMESPACE_LABEL" \
    | kubectl_ apply --server-side --force-conflicts -f - >/dev/null
}

# Kueue's TrainJob integration (trainer.kubeflow.org/trainjob) owns JobSets: it is enabled when
# the JobSet CRD is installed (the jobset addon, started before Kueue), with the
# trainer.kubeflow.org CRDs (deploy/crd/trainjob) installed before Kueue starts. Its webhooks
# give every TrainJob a runtime patch of Kueue's and judge its runtime, so on this shared test
# cluster they act only in namespaces labelled $KUEUE_TRAINJOB_NAMESPACE_LABEL=true (the Kueue
# TrainJob tests' namespaces), and the other TrainJob tests see the controller alone.
KUEUE_TRAINJOB_NAMESPACE_LABEL=kueue-trainjob.addons-test.mpi-controller.io
kueue_trainjob() {
  kubectl_ get crd jobsets.jobset.x-k8s.io >/dev/null 2>&1
}

kueue_config() {
  local frameworks="  - batch/job" kind
  for kind in "${KUEUE_KUBEFLOW_KINDS[@]}"; do frameworks+=$'\n'"  - kubeflow.org/$kind"; done
  if kueue_trainjob; then frameworks+=$'\n'"  - trainer.kubeflow.org/trainjob"; fi
  sed -e "s#@NAMESPACE@#$KUEUE_NAMESPACE#" -e "s#@HEALTH_PORT@#$KUEUE_HEALTH_PORT#" \
      -e "s#@METRICS_PORT@#$KUEUE_METRICS_PORT#" -e "s#@WEBHOOK_PORT@#$KUEUE_WEBHOOK_PORT#" \
      -e "s#@CERT_DIR@#$ADDON_STATE/kueue/certs#" "$HACK/addons/kueue-config.yaml" \
    | awk -v frameworks="$frameworks" '$0 == "  @FRAMEWORKS@" {print frameworks; next} {print}' \
    >"$ADDON_STATE/kueue/config.yaml"
}

kueue_up() {
  local dir; dir=$(addon_module_dir kueue)
  addon_ports kueue KUEUE_WEBHOOK_PORT KUEUE_HEALTH_PORT KUEUE_METRICS_PORT
  kueue_pki
  kueue_secret
  kueue_crds "$dir"
  kueue_webhooks "$dir"
  kueue_config
  # The kubeflow.org CRDs this project serves (deploy/crd), so that every enabled integration
  # sets up its controller at start (Kueue otherwise polls for a missing API, backing off to
  # 2 minutes).
  KUBECONFIG=$STATE/kubeconfig bash "$HACK/install-crd.sh" >/dev/null
  if kueue_trainjob; then
    KUBECONFIG=$STATE/kubeconfig bash "$HACK/install-crd.sh" deploy/crd/trainjob >/dev/null
  fi
  cat >"$STATE/run/kueue.sh" <<EOF
KUBECONFIG=$STATE/kubeconfig exec $(addon_bin_dir kueue)/kueue --config=$ADDON_STATE/kueue/config.yaml \
  --kubeconfig=$STATE/kubeconfig --zap-log-level=info
EOF
  start_addon_process kueue
}

# ---- Volcano ----------------------------------------------------------------------------------

volcano_up() {
  local dir; dir=$(addon_module_dir volcano)
  addon_ports volcano VOLCANO_METRICS_PORT VOLCANO_HEALTHZ_PORT
  apply_module_crds "$dir"/installer/helm/chart/volcano/crd/bases/*.yaml
  # The scheduler configuration of Volcano's own chart (enqueue, allocate, backfill; gang, ...).
  cp "$dir/installer/helm/chart/volcano/config/volcano-scheduler.conf" "$ADDON_STATE/volcano/"
  chmod u+w "$ADDON_STATE/volcano/volcano-scheduler.conf"
  cat >"$STATE/run/volcano-scheduler.sh" <<EOF
KUBECONFIG=$STATE/kubeconfig exec $(addon_bin_dir volcano)/vc-scheduler --kubeconfig=$STATE/kubeconfig \
  --scheduler-name=volcano --scheduler-conf=$ADDON_STATE/volcano/volcano-scheduler.conf \
  --leader-elect=false --enable-healthz=true --healthz-address=127.0.0.1:$VOLCANO_HEALTHZ_PORT \
  --enable-metrics=true --listen-address=127.0.0.1:$VOLCANO_METRICS_PORT \
  --cache-dumper=false --kube-api-qps=200 --kube-api-burst=400 --logtostderr -v=3
EOF
  start_addon_process volcano-scheduler
  # It creates the queue `default` (where PodGroups without a queue go) once it runs.
  wait_until 60 "Volcano's default queue" kubectl_ get queues.scheduling.volcano.sh default
}

# ---- scheduler-plugins ------------------------------------------------------------------------

scheduler_plugins_up() {
  local dir bin; dir=$(addon_module_dir scheduler-plugins); bin=$(addon_bin_dir scheduler-plugins)
  addon_ports scheduler-plugins SP_SCHEDULER_PORT SP_CONTROLLER_METRICS_PORT SP_CONTROLLER_PROBE_PORT
  # PodGroup (Coscheduling) and ElasticQuota (the controller watches both).
  apply_module_crds "$dir/manifests/coscheduling/crd.yaml" "$dir/manifests/capacityscheduling/crd.yaml"
  sed -e "s#@KUBECONFIG@#$STATE/kubeconfig#" "$HACK/addons/scheduler-plugins-config.yaml" \
    >"$ADDON_STATE/scheduler-plugins/config.yaml"
  local kc=$STATE/kubeconfig
  cat >"$STATE/run/scheduler-plugins-scheduler.sh" <<EOF
KUBECONFIG=$kc exec $bin/scheduler-plugins-scheduler --config=$ADDON_STATE/scheduler-plugins/config.yaml \
  --authentication-kubeconfig=$kc --authorization-kubeconfig=$kc \
  --bind-address=127.0.0.1 --secure-port=$SP_SCHEDULER_PORT
EOF
  cat >"$STATE/run/scheduler-plugins-controller.sh" <<EOF
KUBECONFIG=$kc exec $bin/scheduler-plugins-controller --kubeconfig=$kc \
  --metricsAddr=127.0.0.1:$SP_CONTROLLER_METRICS_PORT --probeAddr=127.0.0.1:$SP_CONTROLLER_PROBE_PORT \
  --qps=50 --burst=100 --workers=4
EOF
  start_addon_process scheduler-plugins-scheduler
  start_addon_process scheduler-plugins-controller
}

# ---- JobSet -----------------------------------------------------------------------------------

jobset_pki() {  # a CA and a serving certificate for 127.0.0.1 (the webhooks' URLs)
  local pki=$ADDON_STATE/jobset/pki
  [[ -f $pki/tls.crt ]] && return 0
  mkdir -p "$pki" "$ADDON_STATE/jobset/certs"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -days 3650 \
    -subj "/CN=jobset-local-ca" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$pki/tls.key" -subj "/CN=127.0.0.1" \
    -out "$pki/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$pki/tls.ext"
  openssl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -extfile "$pki/tls.ext" -out "$pki/tls.crt" 2>/dev/null
  # The webhook server reads tls.crt and tls.key from certDir.
  cp "$pki/tls.crt" "$pki/tls.key" "$ADDON_STATE/jobset/certs/"
}

# The module's webhook configurations with its kustomization's patches applied (each patch file
# replaces the pod webhook of its configuration: CREATE only, pods with a JobSet label), every
# webhook pointed at https://127.0.0.1:<port><its path> with our CA; named jobset-<name>.
jobset_webhooks() {  # jobset_webhooks MODULE_DIR
  local webhook=$1/config/components/webhook ca
  ca=$(base64 -w0 <"$ADDON_STATE/jobset/pki/ca.crt")
  "$ADDON_PYTHON" - "$webhook" "https://127.0.0.1:$JOBSET_WEBHOOK_PORT" "$ca" <<'PY' \
    | kubectl_ apply --server-side --force-conflicts -f - >/dev/null
import json, pathlib, sys
import yaml
webhook, url, ca = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
configs = [d for d in yaml.safe_load_all((webhook / "manifests.yaml").read_text()) if d]
kustomization = yaml.safe_load((webhook / "kustomization.yaml").read_text())
for patch in kustomization.get("patches", []):
    target = patch["target"]
    config = next(c for c in configs if c["kind"] == target["kind"]
                  and c["metadata"]["name"] == target["name"])
    for op in yaml.safe_load((webhook / patch["path"]).read_text()):
        assert op["op"] == "replace" and op["path"].startswith("/webhooks/"), op
        config["webhooks"][int(op["path"].rsplit("/", 1)[1])] = op["value"]
for config in configs:
    config["metadata"] = {"name": "jobset-" + config["metadata"]["name"],
                          "labels": {"app.kubernetes.io/name": "jobset"}}
    for hook in config["webhooks"]:
        hook["clientConfig"] = {"url": url + hook["clientConfig"]["service"]["path"],
                                "caBundle": ca}
json.dump({"apiVersion": "v1", "kind": "List", "items": configs}, sys.stdout)
PY
}

jobset_up() {
  local dir; dir=$(addon_module_dir jobset)
  addon_ports jobset JOBSET_WEBHOOK_PORT JOBSET_HEALTH_PORT JOBSET_METRICS_PORT
  jobset_pki
  # One served version (v1alpha2): the base CRD, without the kustomization's conversion
  # webhook patch (a CRD with one version converts nothing).
  apply_module_crds "$dir/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
  jobset_webhooks "$dir"
  cat >"$ADDON_STATE/jobset/config.yaml" <<EOF
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $JOBSET_WEBHOOK_PORT
  certDir: $ADDON_STATE/jobset/certs
metrics:
  bindAddress: 127.0.0.1:$JOBSET_METRICS_PORT
health:
  healthProbeBindAddress: 127.0.0.1:$JOBSET_HEALTH_PORT
EOF
  cat >"$STATE/run/jobset-controller.sh" <<EOF
KUBECONFIG=$STATE/kubeconfig exec $(addon_bin_dir jobset)/jobset-controller \
  --config=$ADDON_STATE/jobset/config.yaml --kubeconfig=$STATE/kubeconfig --zap-log-level=info
EOF
  start_addon_process jobset-controller
}

# ---- up / status ------------------------------------------------------------------------------

addon_running() {  # every process of the addon is alive
  local process
  for process in $(addon_processes "$1"); do pid_alive "$process" || return 1; done
}

addons_up() {  # addons_up ADDON...: on the running cluster; skips those already running
  local addon
  mkdir -p "$ADDON_STATE" "$STATE/run"
  # shellcheck disable=SC1091
  source "$STATE/ports.env"
  # JobSet before Kueue: Kueue enables its TrainJob integration when the JobSet CRD is there.
  local ordered=()
  for addon in "$@"; do [[ $addon == jobset ]] && ordered+=("$addon"); done
  for addon in "$@"; do [[ $addon == jobset ]] || ordered+=("$addon"); done
  for addon in "${ordered[@]}"; do
    if addon_running "$addon"; then
      addon_log "$addon is already running"
    else
      local start=$SECONDS
      addon_log "starting $addon v$(addon_version "$addon")"
      "${addon//-/_}_up" || { addon_log "$addon did not start; logs in $STATE/logs"; return 1; }
      addon_log "$addon ready in $((SECONDS - start))s"
    fi
    grep -qx "$addon" "$ADDON_STATE/enabled" 2>/dev/null || echo "$addon" >>"$ADDON_STATE/enabled"
  done
}

addons_enabled() { cat "$ADDON_STATE/enabled" 2>/dev/null || true; }

addons_status() {
  local addon process state
  for addon in $(addons_enabled); do
    state=""
    for process in $(addon_processes "$addon"); do
      if pid_alive "$process"; then state+=" $process (pid $(cat "$STATE/pids/$process.pid"))"
      else state+=" $process (stopped)"; fi
    done
    echo "addon $addon v$(addon_version "$addon"):$state"
  done
}

addon_component_cmd() {  # addon_component_cmd start|stop|restart PROCESS
  require_state
  local action=$1 name=$2 addon
  addon=$(addon_of_process "$name")
  [[ -f $STATE/run/$name.sh ]] || { log "$addon was not started on this cluster"; exit 1; }
  case $action in
    stop) stop_component "$name" ;;
    start) start_addon_process "$name" ;;
    restart) stop_component "$name"; start_addon_process "$name" ;;
  esac
}

#!/usr/bin/env bash
# `make demo`: brings up the local cluster, installs the CRDs of every kind (MPIJob, TFJob,
# PyTorchJob, XGBoostJob, PaddleJob, JAXJob), starts mpi-controller against it, submits
# examples/pi.yaml and follows the job until it succeeds, then does the same with the TFJob
# examples/tensorflow-dist-mnist.yaml, the PyTorchJob examples/pytorch-simple.yaml, the
# XGBoostJob examples/xgboost/xgboostjob.yaml, the PaddleJob examples/paddlepaddle/simple-cpu.yaml
# and the JAXJob examples/jax/demo.yaml; then, through the real JobSet controller (the cluster's
# jobset addon), a Kubeflow Trainer v2 TrainJob on the shipped ClusterTrainingRuntime
# torch-distributed (deploy/runtimes).
# `hack/demo.sh down` stops the controller and the cluster. MPI_CONTROLLER_CLUSTER_DIR picks the
# cluster's state directory (default ~/.cache/mpi-controller/cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
CLUSTER=hack/local-cluster.sh
if [[ ${1:-} == down ]]; then exec bash "$CLUSTER" down; fi

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Starting the local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, KWOK fake nodes) and the JobSet controller"
echo "    (the first run builds them from Go modules: that takes a while, later runs reuse the cache)"
KUBECONFIG=$(bash "$CLUSTER" up --addons jobset | tail -n 1)
export KUBECONFIG
STATE=$(dirname "$KUBECONFIG")
KUBECTL="$(bash "$CLUSTER" bin-dir)/kubectl"
k() { "$KUBECTL" "$@"; }
k get nodes

step "Installing the CRDs (mpijobs.kubeflow.org: v2beta1 stored, v1 and v1alpha2 through the conversion webhook; tfjobs, pytorchjobs, xgboostjobs, paddlejobs and jaxjobs.kubeflow.org v1)"
bash hack/install-crd.sh
echo "    and trainer.kubeflow.org's trainjobs, trainingruntimes and clustertrainingruntimes (v1alpha1), then the runtimes of deploy/runtimes"
bash hack/install-crd.sh deploy/crd/trainjob
k apply --server-side --force-conflicts -k deploy/runtimes

step "Starting mpi-controller locally against the cluster (logs: $STATE/logs/mpi-controller.log)"
if [[ -f $STATE/pids/mpi-controller.pid ]] && kill -0 "$(cat "$STATE/pids/mpi-controller.pid")" 2>/dev/null; then
  echo "    already running (pid $(cat "$STATE/pids/mpi-controller.pid"))"
else
  k create namespace mpi-operator --dry-run=client -o yaml | k apply -f - >/dev/null
  # The API server runs on 127.0.0.1 too, so it can call the webhooks of this local process:
  # --webhook-url points the CRD's conversion and the ValidatingWebhookConfiguration at it.
  port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # TrainJob runs only when named (Kubeflow Trainer may serve its CRD): name every kind.
  schemes=()
  for scheme in mpijob tfjob pytorchjob xgboostjob paddlejob jaxjob trainjob; do schemes+=(--enable-scheme "$scheme"); done
  setsid .venv/bin/mpi-controller run --kubeConfig "$KUBECONFIG" --monitoring-port 0 --health-port 0 "${schemes[@]}" \
    --webhook-url "https://127.0.0.1:$port" --webhook-server-port "$port" \
    --log-format console >>"$STATE/logs/mpi-controller.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/mpi-controller.pid"
  echo "    pid $(cat "$STATE/pids/mpi-controller.pid"), webhooks on https://127.0.0.1:$port"
fi
echo "    waiting for the conversion webhook (MPIJob v1 and v1alpha2)"
for _ in $(seq 1 120); do  # a server-side dry run of a v1 create needs the conversion
  sed 's/name: tensorflow-mnist-elastic/name: webhook-probe/' examples/v1/tensorflow-mnist-elastic.yaml |
    k create --dry-run=server -f - >/dev/null 2>&1 && break
  sleep 0.5
done

step "Submitting examples/pi.yaml: an MPIJob with 1 launcher and 2 workers"
k delete mpijobs.v2beta1.kubeflow.org pi --ignore-not-found --wait=true >/dev/null
# The garbage collector removes a previous run's children; do not race it on a re-run.
k delete services,configmaps,secrets,jobs -l app=pi --ignore-not-found --wait=true >/dev/null
k apply -f examples/pi.yaml

step "Following the MPIJob's conditions (KWOK simulates the pods: workers run, the launcher finishes)"
last="" deadline=$((SECONDS + 180))
while ((SECONDS < deadline)); do
  conds=$(k get mpijobs.v2beta1.kubeflow.org pi -o jsonpath='{range .status.conditions[*]}{.type}={.status} {end}' 2>/dev/null || true)
  if [[ $conds != "$last" ]]; then
    printf '    %s  %s\n' "$(date +%H:%M:%S)" "${conds:-(no status yet)}"
    last=$conds
  fi
  if [[ $conds == *"Succeeded=True"* ]]; then break; fi
  if [[ $conds == *"Failed=True"* ]]; then echo "the job failed; see $STATE/logs/mpi-controller.log"; exit 1; fi
  sleep 0.5
done
if [[ $last != *"Succeeded=True"* ]]; then
  echo "the job did not succeed within 180s; see $STATE/logs/mpi-controller.log"; exit 1
fi

step "Waiting for the controller to clean up the workers (cleanPodPolicy: Running)"
for _ in $(seq 1 60); do
  [[ -z $(k get pods -l training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=worker -o name) ]] && break
  sleep 0.5
done
uid=$(k get mpijobs.v2beta1.kubeflow.org pi -o jsonpath='{.metadata.uid}')
for _ in $(seq 1 20); do  # events are written asynchronously
  k get events --field-selector "involvedObject.uid=$uid,reason=MPIJobSucceeded" -o name | grep -q . && break
  sleep 0.5
done

step "What the controller made: the MPIJob, its launcher Job (and pod), Service, ConfigMap, Secret"
k get mpijobs,jobs,pods,services,configmaps,secrets -l 'app=pi'
k get mpijobs.v2beta1.kubeflow.org pi
k get pods -l training.kubeflow.org/job-name=pi
echo
echo "The hostfile the launcher sees at /etc/mpi/hostfile:"
k get configmap pi-config -o jsonpath='{.data.hostfile}' | sed 's/^/    /'
echo
echo "Events recorded on the MPIJob:"
k get events --field-selector "involvedObject.uid=$uid" --sort-by=.lastTimestamp

# follow KIND NAME: print the kubeflow-namespace job's conditions until it succeeds. KWOK ends
# the pods of every training kind by itself three seconds after they run, as their training
# programs would exit 0 (TFJob's parameter servers run on).
follow() {
  local kind=$1 name=$2 last="" conds deadline=$((SECONDS + 180))
  while ((SECONDS < deadline)); do
    conds=$(k -n kubeflow get "$kind" "$name" \
      -o jsonpath='{range .status.conditions[*]}{.type}={.status} {end}' 2>/dev/null || true)
    if [[ $conds != "$last" ]]; then
      printf '    %s  %s\n' "$(date +%H:%M:%S)" "${conds:-(no status yet)}"
      last=$conds
    fi
    [[ $conds == *"Succeeded=True"* ]] && return 0
    if [[ $conds == *"Failed=True"* ]]; then echo "the $kind failed; see $STATE/logs/mpi-controller.log"; exit 1; fi
    sleep 0.5
  done
  echo "the $kind $name did not succeed within 180s; see $STATE/logs/mpi-controller.log"; exit 1
}

step "Submitting examples/tensorflow-dist-mnist.yaml: a TFJob with 2 parameter servers and 4 workers"
echo "    (KWOK plays the training programs of this and the next kinds: each pod exits 0 three seconds"
echo "    after it runs; TFJob's parameter servers serve until deleted)"
k get namespace kubeflow >/dev/null 2>&1 || k create namespace kubeflow >/dev/null
k -n kubeflow delete tfjob tf-dist-mnist-for-e2e-test --ignore-not-found --wait=true >/dev/null
k create -f examples/tensorflow-dist-mnist.yaml
follow tfjob tf-dist-mnist-for-e2e-test
k -n kubeflow get tfjob tf-dist-mnist-for-e2e-test
k -n kubeflow get pods,services -l job-name=tf-dist-mnist-for-e2e-test
echo
echo "TF_CONFIG of worker 0:"
k -n kubeflow get pod tf-dist-mnist-for-e2e-test-worker-0 \
  -o jsonpath='{.spec.containers[0].env[?(@.name=="TF_CONFIG")].value}' | sed 's/^/    /'
echo

step "Submitting examples/pytorch-simple.yaml: a PyTorchJob with a master and a worker"
k -n kubeflow delete pytorchjob pytorch-simple --ignore-not-found --wait=true >/dev/null
k create -f examples/pytorch-simple.yaml
follow pytorchjob pytorch-simple
k -n kubeflow get pytorchjob pytorch-simple
k get pods -l job-name=pytorch-simple -n kubeflow
echo
echo "The environment of the worker (MASTER_ADDR, WORLD_SIZE, RANK, PET_*):"
k -n kubeflow get pod pytorch-simple-worker-0 \
  -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value}{"\n"}{end}' | sed 's/^/    /'

env_of() {  # env_of POD: the environment of the pod's first container, one NAME=value a line
  k -n kubeflow get pod "$1" -o json | .venv/bin/python -c '
import json, sys
for var in json.load(sys.stdin)["spec"]["containers"][0].get("env", []):
    ref = var.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    print("    %s=%s" % (var["name"], var["value"] if "value" in var else f"(fieldRef {ref})"))'
}

step "Submitting examples/xgboost/xgboostjob.yaml: an XGBoostJob with a master and 2 workers"
k -n kubeflow delete xgboostjob xgboost-dist-iris-test-train --ignore-not-found --wait=true >/dev/null
k -n kubeflow create -f examples/xgboost/xgboostjob.yaml  # the manifest names no namespace
follow xgboostjob xgboost-dist-iris-test-train
k -n kubeflow get xgboostjob xgboost-dist-iris-test-train
k -n kubeflow get pods -l job-name=xgboost-dist-iris-test-train -L training.kubeflow.org/job-role
echo
echo "The environment of worker 0 (MASTER_*, WORLD_SIZE, RANK, WORKER_*):"
env_of xgboost-dist-iris-test-train-worker-0

step "Submitting examples/paddlepaddle/simple-cpu.yaml: a PaddleJob with 2 collective workers"
k -n kubeflow delete paddlejob paddle-simple-cpu --ignore-not-found --wait=true >/dev/null
k create -f examples/paddlepaddle/simple-cpu.yaml
follow paddlejob paddle-simple-cpu
k -n kubeflow get paddlejob paddle-simple-cpu
k -n kubeflow get pods -l job-name=paddle-simple-cpu
echo
echo "The environment of worker 0, the rendezvous (PADDLE_MASTER through its own pod IP):"
env_of paddle-simple-cpu-worker-0

step "Submitting examples/jax/demo.yaml: a JAXJob with 2 workers"
k -n kubeflow delete jaxjob jaxjob-simple --ignore-not-found --wait=true >/dev/null
k create -f examples/jax/demo.yaml
follow jaxjob jaxjob-simple
k -n kubeflow get jaxjob jaxjob-simple
k -n kubeflow get pods -l job-name=jaxjob-simple -L training.kubeflow.org/job-role
echo
echo "The environment of worker 1 (COORDINATOR_*, NUM_PROCESSES, PROCESS_ID):"
env_of jaxjob-simple-worker-1

step "Submitting a TrainJob (trainer.kubeflow.org/v1alpha1) of 2 nodes on the ClusterTrainingRuntime torch-distributed"
echo "    (mpi-controller builds its JobSet; the JobSet controller makes the Jobs; KWOK ends their pods)"
k -n kubeflow delete trainjob demo-torch --ignore-not-found --wait=true >/dev/null
k -n kubeflow create -f - <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: demo-torch
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
    command: [torchrun, /workspace/train.py]
EOF
last="" deadline=$((SECONDS + 180))
while ((SECONDS < deadline)); do
  conds=$(k -n kubeflow get trainjob demo-torch \
    -o jsonpath='{range .status.conditions[*]}{.type}={.status} {end}' 2>/dev/null || true)
  if [[ $conds != "$last" ]]; then
    printf '    %s  %s\n' "$(date +%H:%M:%S)" "${conds:-(no status yet)}"
    last=$conds
  fi
  [[ $conds == *"Complete=True"* ]] && break
  if [[ $conds == *"Failed=True"* ]]; then echo "the TrainJob failed; see $STATE/logs/mpi-controller.log"; exit 1; fi
  sleep 0.5
done
if [[ $last != *"Complete=True"* ]]; then
  echo "the TrainJob did not complete within 180s; see $STATE/logs/mpi-controller.log"; exit 1
fi
k -n kubeflow get trainjob demo-torch
k -n kubeflow get jobset demo-torch
k -n kubeflow get jobs,pods -l jobset.sigs.k8s.io/jobset-name=demo-torch
echo
echo "The environment of node 0 (PET_* for torchrun, from the torch ML policy):"
env_of "$(k -n kubeflow get pods -l jobset.sigs.k8s.io/jobset-name=demo-torch,batch.kubernetes.io/job-completion-index=0 -o jsonpath='{.items[0].metadata.name}')"
echo
echo "The TrainJob equivalent to a PyTorchJob: .venv/bin/mpi-controller convert -f examples/pytorch-simple.yaml --to trainer.kubeflow.org/v1alpha1"

step "The six kubeflow.org kinds this controller serves, and TrainJob"
k get crd -o custom-columns='NAME:.metadata.name,KIND:.spec.names.kind,VERSIONS:.spec.versions[*].name,SCALE:.spec.versions[0].subresources.scale.specReplicasPath' |
  awk 'NR == 1 || /kubeflow\.org/'
echo
k -n kubeflow get tfjobs,pytorchjobs,xgboostjobs,paddlejobs,jaxjobs,trainjobs

step "Done. The MPIJob pi, the TFJob tf-dist-mnist-for-e2e-test, the PyTorchJob pytorch-simple, the XGBoostJob xgboost-dist-iris-test-train, the PaddleJob paddle-simple-cpu and the JAXJob jaxjob-simple succeeded; the TrainJob demo-torch completed."
echo "    The cluster and the controller keep running: export KUBECONFIG=$KUBECONFIG"
echo "    It serves MPIJob v2beta1, v1 and v1alpha2: kubectl create -f examples/v1/tensorflow-mnist-elastic.yaml"
echo "    Stop everything with: make demo-down   (or: hack/local-cluster.sh down)"

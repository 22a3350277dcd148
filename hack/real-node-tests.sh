#!/usr/bin/env bash
# Runs the real-node tests (e2e/real) on a local cluster of their own that has a real node.
#
#   hack/real-node-tests.sh [PYTEST_ARGS...]           all of e2e/real (make e2e-real); test paths
#       among the arguments (e2e/...) run instead of all of it
#   hack/real-node-tests.sh --short [PYTEST_ARGS...]   the short form (make test): the OpenMPI pi
#       job as mpiuser, the malformed launcher command, the controller Deployment, the MPIJob v1
#       pi job (kubectl-exec mode), and one of the Kubeflow guides' jobs really training (the
#       PyTorchJob pytorch-simple: DDP across Master and Worker) when the torch image is cached
#       (only that framework's image is then imported; when it is not cached, the short form
#       says so and runs without that test)
#
# The cluster lives in $REAL_CLUSTER_DIR (default ~/.cache/mpi-controller/cluster-real); it is
# brought up with `hack/local-cluster.sh up --real-node` and taken down afterwards (its pods,
# mounts, bridge, iptables rules and state removed) unless REAL_KEEP_CLUSTER=1.
# When this machine cannot run a real node (not root, no cgroups or overlayfs, Debian packages
# missing and not installable, another real node running here), or with --short when the real
# node's binaries and images are not all cached yet and REAL_NODE_BUILD is not 1, it prints
# "SKIPPED real-node tests: <reason>" and exits 0: nothing ran, nothing passed.
set -euo pipefail
cd "$(dirname "$0")/.."
export MPI_CONTROLLER_CLUSTER_DIR=${REAL_CLUSTER_DIR:-$HOME/.cache/mpi-controller/cluster-real}
STATE=$MPI_CONTROLLER_CLUSTER_DIR
SHORT_TESTS=(
  "e2e/real/test_mpi.py::test_pi_runs_across_the_workers[mpiuser-openmpi]"
  e2e/real/test_mpi.py::test_malformed_command_fails_the_job
  e2e/real/test_deployment.py
  e2e/real/test_mpi_v1.py
)
# The short form's guide job and the framework image it needs (hack/lib/images.sh IMAGE_FRAMEWORKS).
SHORT_GUIDE=e2e/real/test_guides.py::test_pytorch_simple_trains_with_ddp_across_master_and_worker
SHORT_FRAMEWORKS=torch
tests=(e2e/real)
short=0
if [[ ${1:-} == --short ]]; then short=1; tests=("${SHORT_TESTS[@]}"); shift; fi
# The frameworks' images (hack/lib/images.sh IMAGE_FRAMEWORKS) only for the whole suite.
((short)) || export REAL_NODE_FRAMEWORKS=1
for arg in "$@"; do
  if ((!short)) && [[ $arg == e2e/* ]]; then tests=(); break; fi
done

skip() { echo "SKIPPED real-node tests: $*"; exit 0; }

if ((short)); then
  export REAL_NODE_FRAMEWORKS=$SHORT_FRAMEWORKS
  if [[ ${REAL_NODE_BUILD:-} != 1 ]]; then
    missing=$(bash hack/local-cluster.sh real-node-uncached)
    if [[ " $missing " == *" image $SHORT_FRAMEWORKS "* ]]; then
      echo "SKIPPED $SHORT_GUIDE: the $SHORT_FRAMEWORKS image is not built on this machine yet" \
        "(102 s measured with the wheels image cached, docs/real-training.md): 'make e2e-real'" \
        "or REAL_NODE_BUILD=1 make test builds it"
      export REAL_NODE_FRAMEWORKS=""
      missing=$(bash hack/local-cluster.sh real-node-uncached)
    fi
    [[ -z $missing ]] || skip "not built on this machine yet ($missing); the first build takes" \
      "10 to 16 minutes: run 'make e2e-real' (or REAL_NODE_BUILD=1 make test) to build and run them"
  fi
  [[ -z $REAL_NODE_FRAMEWORKS ]] || tests+=("$SHORT_GUIDE")
fi
why=$(bash hack/local-cluster.sh real-node-check 2>&1) || skip "${why:-the check failed}"
log=$(mktemp)
if ! bash hack/local-cluster.sh up --real-node >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  rm -f "$log"
  bash hack/local-cluster.sh down >/dev/null 2>&1 || true
  echo "the cluster with a real node did not come up (log above)" >&2
  exit 1
fi
grep -E '^\[(local-cluster|real-node)\] .*ready in' "$log" || true
rm -f "$log"
rc=0
KUBECONFIG=$STATE/kubeconfig .venv/bin/pytest -q -rs -p no:cacheprovider "${tests[@]}" "$@" || rc=$?
if [[ -z ${REAL_KEEP_CLUSTER:-} ]]; then bash hack/local-cluster.sh down; fi
exit "$rc"

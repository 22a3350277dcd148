# Sourced by the Makefile: exports KUBECONFIG for the cluster the tests should use.
# Keeps $KUBECONFIG when it is set and the API server answers (kind, or any cluster of one's
# own); otherwise brings up the local test cluster (building it on first use).
# shellcheck shell=bash
_mpi_reachable() {
  [[ -n ${KUBECONFIG:-} ]] && .venv/bin/python - "$KUBECONFIG" <<'PY' 2>/dev/null
import sys
from kubernetes import client, config
api = config.new_client_from_config(config_file=sys.argv[1])
client.VersionApi(api).get_code(_request_timeout=5)
PY
}
# Tests get a cluster of their own, apart from the one `make demo` leaves running (whose
# controller would otherwise reconcile the tests' jobs too).
export MPI_CONTROLLER_CLUSTER_DIR=${MPI_CONTROLLER_CLUSTER_DIR:-$HOME/.cache/mpi-controller/cluster-test}
if _mpi_reachable; then
  echo "using the cluster in KUBECONFIG=$KUBECONFIG" >&2
else
  KUBECONFIG=$(bash hack/local-cluster.sh up | tail -n 1)
  export KUBECONFIG
fi
unset -f _mpi_reachable

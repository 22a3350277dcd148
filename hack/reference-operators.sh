#!/usr/bin/env bash
# The reference operators, built from the Go module proxy (versions pinned in hack/versions.env,
# wrapper modules in hack/tools/<operator>, binaries cached in
# ~/.cache/mpi-controller/bin/<operator>-v<version>-<go version>/, never in the repository).
#
#   hack/reference-operators.sh build [OPERATOR]...   build (or reuse); default all four
#   hack/reference-operators.sh bin-dir OPERATOR      print the cache dir
#   hack/reference-operators.sh module-dir OPERATOR   upstream's source tree in the Go module
#                                                     cache (examples, CRDs)
#   hack/reference-operators.sh gen OPERATOR          regenerate a wrapper
#
# OPERATOR: mpi-operator (v0.8.2, MPIJob v2beta1), mpi-operator-v0.2 (v0.2.3, MPIJob v1alpha2)
# training-operator (v1.9.2) or trainer (Kubeflow Trainer v2.3.0, TrainJob).
#
# mpi-operator's cache holds `mpi-operator` and `mpi-operator-e2e.test` (upstream's e2e suite,
# `go test -c github.com/kubeflow/mpi-operator/test/e2e`); mpi-operator-v0.2's `mpi-operator`
# (cmd/mpi-operator.v1alpha2); training-operator's `training-operator` (cmd/training-operator.v1); trainer's
# `trainer-controller-manager` (cmd/trainer-controller-manager). Environment: MPI_CONTROLLER_CACHE (default ~/.cache/mpi-controller).
set -euo pipefail
HACK=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$HACK/versions.env"
CACHE=${MPI_CONTROLLER_CACHE:-$HOME/.cache/mpi-controller}
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo nogo)
# shellcheck source=lib/build.sh
source "$HACK/lib/build.sh"
# shellcheck source=lib/reference.sh
source "$HACK/lib/reference.sh"

operators() { if (($#)); then echo "$@"; else echo mpi-operator mpi-operator-v0.2 training-operator trainer; fi; }

case "${1:-}" in
  build)
    shift
    for op in $(operators "$@"); do
      case $op in
        mpi-operator) build_mpi_operator ;;
        mpi-operator-v0.2) build_mpi_operator_v1alpha2 ;;
        training-operator) build_training_operator ;;
        trainer) build_trainer ;;
        *) echo "unknown reference operator $op" >&2; exit 2 ;;
      esac
    done ;;
  bin-dir)
    case "${2:?operator name}" in
      mpi-operator) mpi_operator_bin_dir ;;
      mpi-operator-v0.2) mpi_operator_v1alpha2_bin_dir ;;
      training-operator) training_operator_bin_dir ;;
      trainer) trainer_bin_dir ;;
      *) echo "unknown reference operator $2" >&2; exit 2 ;;
    esac ;;
  module-dir) module_dir "${2:?operator name}" ;;
  gen) shift; for op in $(operators "$@"); do gen_reference_module "$op"; done ;;
  *) awk 'NR>1 && /^#/ {sub(/^# ?/, ""); print; next} NR>1 {exit}' "$0"; exit 2 ;;
esac

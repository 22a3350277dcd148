# Builds the reference operators (the Go implementations this project is compared with) from the
# Go module proxy into caches outside the repo, one directory per operator keyed by its pinned
# version and the Go version. Sourced by hack/reference-operators.sh after versions.env and
# lib/build.sh (for build_one); needs HACK, CACHE and GO_VERSION.
#
# `go install module/cmd@version` does not work for these modules (the proxy refuses their version
# lists, which `go install` reads), so the wrapper modules hack/tools/mpi-operator,
# hack/tools/mpi-operator-v0.2, hack/tools/training-operator and hack/tools/trainer require them
# and the builds run inside those.
#
# mpi-operator-v0.2 is mpi-operator v0.2.3's `cmd/mpi-operator.v1alpha2` (MPIJob v1alpha2, client-go
# 0.15). Its wrapper carries the module's own `replace` directives (a dependency's are ignored)
# and three of its own: vbom.ml/util (a vanity host that no longer serves; the same code is
# github.com/fvbommel/util), and modern-go/reflect2 1.0.2 with json-iterator 1.1.12 (reflect2
# 1.0.1 crashes on Go 1.18+ maps).
#
# trainer is Kubeflow Trainer v2's `cmd/trainer-controller-manager` (TrainJob,
# trainer.kubeflow.org/v1alpha1), TRAINER_VERSION from the module github.com/kubeflow/trainer/v2.
# shellcheck shell=bash

MPI_OPERATOR_MODULE=github.com/kubeflow/mpi-operator
TRAINING_OPERATOR_MODULE=github.com/kubeflow/training-operator
TRAINER_MODULE=github.com/kubeflow/trainer/v2

mpi_operator_bin_dir() { echo "$CACHE/bin/mpi-operator-v$MPI_OPERATOR_VERSION-$GO_VERSION"; }
mpi_operator_v1alpha2_bin_dir() { echo "$CACHE/bin/mpi-operator-v$MPI_OPERATOR_V1ALPHA2_VERSION-$GO_VERSION"; }
training_operator_bin_dir() { echo "$CACHE/bin/training-operator-v$TRAINING_OPERATOR_VERSION-$GO_VERSION"; }
trainer_bin_dir() { echo "$CACHE/bin/trainer-v$TRAINER_VERSION-$GO_VERSION"; }

# The module's source directory in the Go module cache (downloaded if needed): examples, CRDs
# and manifests are read from there at run time, never copied into this repository.
module_dir() {  # module_dir mpi-operator|mpi-operator-v0.2|training-operator|trainer
  local wrapper module
  case $1 in
    mpi-operator) wrapper=$HACK/tools/mpi-operator; module=$MPI_OPERATOR_MODULE@v$MPI_OPERATOR_VERSION ;;
    mpi-operator-v0.2)
      wrapper=$HACK/tools/mpi-operator-v0.2; module=$MPI_OPERATOR_MODULE@v$MPI_OPERATOR_V1ALPHA2_VERSION ;;
    training-operator)
      wrapper=$HACK/tools/training-operator; module=$TRAINING_OPERATOR_MODULE@v$TRAINING_OPERATOR_VERSION ;;
    trainer) wrapper=$HACK/tools/trainer; module=$TRAINER_MODULE@v$TRAINER_VERSION ;;
    *) echo "unknown reference operator $1" >&2; return 2 ;;
  esac
  (cd "$wrapper" && GOTOOLCHAIN=local GOFLAGS= go mod download -json "$module") \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

build_test_binary() {  # build_test_binary NAME MODULE_DIR PACKAGE: `go test -c`, cached like build_one
  local name=$1 dir=$2 package=$3
  if [[ -x $BIN_DIR/$name ]]; then
    return 0
  fi
  local start=$SECONDS
  echo "building $name (cold builds take minutes; output cached in $BIN_DIR)" >&2
  (cd "$dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS= go test -c -trimpath -ldflags="-s -w" \
     -o "$BIN_DIR/$name.tmp" "$package")
  mv "$BIN_DIR/$name.tmp" "$BIN_DIR/$name"
  echo "built $name in $((SECONDS - start))s" >&2
}

build_mpi_operator() {  # mpi-operator and upstream's e2e test binary
  local BIN_DIR; BIN_DIR=$(mpi_operator_bin_dir)
  mkdir -p "$BIN_DIR"
  build_one mpi-operator "$HACK/tools/mpi-operator" \
    "-s -w -X $MPI_OPERATOR_MODULE/pkg/version.Version=v$MPI_OPERATOR_VERSION" \
    "$MPI_OPERATOR_MODULE/cmd/mpi-operator"
  build_test_binary mpi-operator-e2e.test "$HACK/tools/mpi-operator" "$MPI_OPERATOR_MODULE/test/e2e"
}

build_mpi_operator_v1alpha2() {
  local BIN_DIR; BIN_DIR=$(mpi_operator_v1alpha2_bin_dir)
  mkdir -p "$BIN_DIR"
  build_one mpi-operator "$HACK/tools/mpi-operator-v0.2" "-s -w" \
    "$MPI_OPERATOR_MODULE/cmd/mpi-operator.v1alpha2"
}

build_training_operator() {
  local BIN_DIR; BIN_DIR=$(training_operator_bin_dir)
  mkdir -p "$BIN_DIR"
  build_one training-operator "$HACK/tools/training-operator" "-s -w" \
    "$TRAINING_OPERATOR_MODULE/cmd/training-operator.v1"
}

build_trainer() {  # Trainer v2's controller manager (TrainJob and its runtimes)
  local BIN_DIR; BIN_DIR=$(trainer_bin_dir)
  mkdir -p "$BIN_DIR"
  build_one trainer-controller-manager "$HACK/tools/trainer" "-s -w" \
    "$TRAINER_MODULE/cmd/trainer-controller-manager"
}

# Regenerates a wrapper module for the pinned version (only when bumping it; the committed
# go.mod/go.sum keep ordinary builds reproducible). `-t` brings the e2e suite's test imports.
gen_reference_module() {  # gen_reference_module mpi-operator|mpi-operator-v0.2|training-operator|trainer
  local dir=$HACK/tools/$1
  rm -f "$dir/go.mod" "$dir/go.sum"
  mkdir -p "$dir"
  (cd "$dir"
   export GOTOOLCHAIN=local GOFLAGS=
   go mod init "mpi-controller/hack/tools/$1" >/dev/null 2>&1
   case $1 in
     mpi-operator)
       go get "$MPI_OPERATOR_MODULE/cmd/mpi-operator@v$MPI_OPERATOR_VERSION"
       go get -t "$MPI_OPERATOR_MODULE/test/e2e@v$MPI_OPERATOR_VERSION" ;;
     mpi-operator-v0.2)
       local module=$MPI_OPERATOR_MODULE@v$MPI_OPERATOR_V1ALPHA2_VERSION gomod from to
       gomod=$(go mod download -json "$module" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
       while read -r from _ to; do
         go mod edit -replace="$from=${to% *}@${to#* }"
       done < <(sed -n '/^replace (/,/^)/{/=>/s/^[[:space:]]*//p}' "$gomod")
       go mod edit -replace=vbom.ml/util=github.com/fvbommel/util@v0.0.0-20160121211510-db5cfe13f5cc
       go get "$MPI_OPERATOR_MODULE/cmd/mpi-operator.v1alpha2@v$MPI_OPERATOR_V1ALPHA2_VERSION"
       go get github.com/modern-go/reflect2@v1.0.2 github.com/json-iterator/go@v1.1.12 ;;
     training-operator)
       go get "$TRAINING_OPERATOR_MODULE/cmd/training-operator.v1@v$TRAINING_OPERATOR_VERSION" ;;
     trainer) go get "$TRAINER_MODULE/cmd/trainer-controller-manager@v$TRAINER_VERSION" ;;
   esac)
}

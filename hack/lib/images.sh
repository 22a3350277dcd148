# Builds the real node's container images, without a container engine or a registry, into a
# cache outside the repo. Sourced by hack/local-cluster.sh (HACK, CACHE, BIN_DIR, K8S_VERSION set).
#
# Each image is an OCI archive $IMAGE_CACHE/NAME-KEY.tar, named localhost/mpi-controller/NAME:KEY,
# where KEY hashes everything the image is made from (its recipe under hack/images/NAME, the
# Debian suite and timestamp, and for the controller the sources deploy/Dockerfile copies). An
# archive whose key exists is reused; a changed input builds afresh.
#   pause             the pod sandbox process (hack/images/pause/pause.go), built with Go
#   base              Debian's essential set + Python 3 and pip (mmdebstrap)
#   mpi               OpenMPI, OpenSSH, the pi program built against it (mmdebstrap)
#   mpich             the same with MPICH, from Debian trixie (see hack/images/mpich/recipe.sh)
#   mpi-pi-openmpi    mpi laid out as upstream's mpi-pi:openmpi (mpirun, /home/mpiuser/pi)
#   mpi-pi-mpich      mpich laid out as upstream's mpi-pi:mpich
#   peers             Python 3, nslookup and the peers program (TFJob/PyTorchJob wiring checks)
#   wheels            base's packages + libstdc++6 and libgomp1, which PyPI's binary wheels need
#   jax               wheels + JAX for CPU (PyPI) and jax-psum (JAXJob: jax.distributed, a psum)
#   xgboost           wheels + XGBoost for CPU (PyPI) and xgboost-train (XGBoostJob: the tracker)
#   paddle            wheels + PaddlePaddle for CPU (PyPI) and paddle-allreduce (PaddleJob: launch,
#                     init_parallel_env, an all_reduce)
#   torch             wheels + PyTorch for CPU (PyPI, without its CUDA libraries: stand-ins compiled
#                     by torch/cuda_stubs.py), the pytorch-simple guide's trainer (PyTorchJob: DDP)
#   tensorflow        wheels + TensorFlow for CPU (PyPI) and tf-dist-mnist (TFJob guide: parameter
#                     servers, between-graph training from TF_CONFIG)
#   mpi-wheels        wheels' packages + Open MPI's runtime (the base of horovod)
#   horovod           mpi-wheels + TensorFlow for CPU (PyPI), Horovod built here from its sdist,
#                     the Horovod guide jobs' programs (tf_cnn_benchmarks.py, elastic MNIST)
#   kubectl-delivery  kubectl (from BIN_DIR) + the delivery script (mmdebstrap)
#   controller        deploy/Dockerfile with BASE_IMAGE=the base image (buildah, chroot isolation)
# Debian images come from the machine's own apt sources (a recipe may name another suite,
# IMAGE_SUITE, then fetched from the machine's Debian mirror), with SOURCE_DATE_EPOCH fixed, so
# the same package versions give the same files. A recipe may run another recipe's customize
# script (IMAGE_CUSTOMIZE=DIR/customize.sh under hack/images; that directory is then part of
# its key). A recipe on another image may name a requirements file of Python packages
# (IMAGE_PIP, in its directory): that image's pip installs them from PyPI at build time, into one
# more layer (pip_layer), with the recipe's IMAGE_PIP_ARGS; then IMAGE_PIP_HOOK (a program under
# hack/images, run on this machine with the installed tree's root) may add to that layer. Nothing
# is downloaded when a pod runs.
# shellcheck shell=bash

IMAGE_NAMES=(pause base mpi mpich mpi-pi-openmpi mpi-pi-mpich peers kubectl-delivery wheels jax
  xgboost paddle torch tensorflow mpi-wheels horovod controller)
# Images only other images are built on (no pod runs them): built and cached, not imported into
# the node's containerd (each archive holds all its layers: importing these would read them twice).
IMAGE_BASES_ONLY=(mpi mpich wheels mpi-wheels)
# The frameworks' own images (e2e/real/test_frameworks.py: JAX, XGBoost, PaddlePaddle from PyPI;
# e2e/real/test_guides.py: PyTorch, TensorFlow, Horovod; about 8 GB of archives in all): built
# and imported into the node only with REAL_NODE_FRAMEWORKS=1 (hack/real-node-tests.sh sets it
# for all of e2e/real), or those named in it (REAL_NODE_FRAMEWORKS=torch: the short form's guide
# job, when its image is cached), so the real node of `make test` neither waits for the others
# nor needs them cached. Their archives are kept.
IMAGE_FRAMEWORKS=(wheels jax xgboost paddle torch tensorflow mpi-wheels horovod)
IMAGE_MACHINE_SUITE=${IMAGE_SUITE:-bookworm}  # the machine's apt sources' suite; recipes' default
IMAGE_EPOCH=1704067200
IMAGE_FORMAT=1  # bump when a build step below changes what an image holds
IMAGE_CACHE=${MPI_CONTROLLER_IMAGE_CACHE:-$CACHE/images}

hash_files() {  # hash_files PATH...: one hash over the names and contents of the files given
  local f
  for f in "$@"; do
    printf '%s\n' "${f#"$HACK/"}"
    sha256sum <"$f"
  done | sha256sum | cut -c1-16
}

image_key() {  # image_key NAME: the content key of an image
  local name=$1 dir=$HACK/images/$1
  case $name in
    pause) { hash_files "$dir/pause.go"; echo "$IMAGE_FORMAT $GO_VERSION"; } | sha256sum | cut -c1-16 ;;
    kubectl-delivery)
      { hash_files "$dir"/*; echo "$IMAGE_FORMAT $IMAGE_MACHINE_SUITE $IMAGE_EPOCH $K8S_VERSION $GO_VERSION"; } \
        | sha256sum | cut -c1-16 ;;
    controller)
      local root=$HACK/..
      {
        image_key base; echo "$IMAGE_FORMAT"
        local sources
        mapfile -t sources < <(cd "$root" && find mpi_controller -type f \( -name '*.py' -o -name py.typed \) | LC_ALL=C sort)
        (cd "$root" && hash_files deploy/Dockerfile .dockerignore pyproject.toml constraints.txt README.md LICENSE "${sources[@]}")
      } | sha256sum | cut -c1-16 ;;
    *)
      local IMAGE_BASE="" IMAGE_SUITE=$IMAGE_MACHINE_SUITE IMAGE_CUSTOMIZE=""
      # shellcheck disable=SC1090,SC1091
      source "$dir/recipe.sh"
      { hash_files "$dir"/*; echo "$IMAGE_FORMAT $IMAGE_SUITE $IMAGE_EPOCH"
        [[ -z $IMAGE_CUSTOMIZE ]] || hash_files "$HACK/images/$(dirname "$IMAGE_CUSTOMIZE")"/*
        [[ -z $IMAGE_BASE ]] || image_key "$IMAGE_BASE"; } | sha256sum | cut -c1-16 ;;
  esac
}

image_ref() { echo "localhost/mpi-controller/$1:$(image_key "$1")"; }
image_archive() { echo "$IMAGE_CACHE/$1-$(image_key "$1").tar"; }

apt_sources() {  # apt_sources SUITE: mmdebstrap mirror arguments for SUITE
  # The machine's own apt sources for its suite ($IMAGE_MACHINE_SUITE); for another suite, its main,
  # -updates and -security archives on the machine's Debian mirrors.
  local f files=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -s $f ]] && files+=("$f")
  done
  if [[ $1 == "$IMAGE_MACHINE_SUITE" ]]; then
    printf '%s\n' "${files[@]}"
    return 0
  fi
  local mirror security
  mirror=$(grep -hoE 'https?://[^ ]*/debian/?( |$)' "${files[@]}" /dev/null | head -n 1 | tr -d ' ')
  security=$(grep -hoE 'https?://[^ ]*/debian-security/?( |$)' "${files[@]}" /dev/null | head -n 1 | tr -d ' ')
  echo "deb ${mirror:-http://deb.debian.org/debian} $1 main"
  echo "deb ${mirror:-http://deb.debian.org/debian} $1-updates main"
  echo "deb ${security:-http://deb.debian.org/debian-security} $1-security main"
}

debian_rootfs() {  # debian_rootfs NAME OUT_TAR: the root filesystem of a recipe image
  local name=$1 out=$2 dir=$HACK/images/$1
  local IMAGE_VARIANT=essential IMAGE_PACKAGES="" IMAGE_BUILD_PACKAGES="" IMAGE_SKIP=""
  local IMAGE_SUITE=$IMAGE_MACHINE_SUITE IMAGE_CUSTOMIZE=""
  # shellcheck disable=SC1090,SC1091
  source "$dir/recipe.sh"
  local hooks=() customize=$dir/customize.sh
  [[ -z $IMAGE_CUSTOMIZE ]] || customize=$HACK/images/$IMAGE_CUSTOMIZE
  if [[ -x $customize ]]; then
    # shellcheck disable=SC2016
    hooks+=(--customize-hook="$customize \"\$1\" $IMAGE_BUILD_PACKAGES")
  fi
  local sources
  mapfile -t sources < <(apt_sources "$IMAGE_SUITE")
  SOURCE_DATE_EPOCH=$IMAGE_EPOCH mmdebstrap --quiet --mode=root --variant="$IMAGE_VARIANT" \
    --format=tar ${IMAGE_PACKAGES:+--include="${IMAGE_PACKAGES// /,}"} ${IMAGE_SKIP:+--skip="$IMAGE_SKIP"} \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    "${hooks[@]}" "$IMAGE_SUITE" "$out" "${sources[@]}"
}

oci_archive() { python3 "$HACK/images/oci_archive.py" "$@" >/dev/null; }

build_recipe_image() {  # build_recipe_image NAME OUT TMP: an image from hack/images/NAME/recipe.sh
  local name=$1 out=$2 dir=$HACK/images/$1 tmp=$3
  local IMAGE_ENTRYPOINT="" IMAGE_CMD="" IMAGE_USER="" IMAGE_ENV="" IMAGE_FILES="" IMAGE_WORKDIR=""
  local IMAGE_BASE="" IMAGE_SUITE=$IMAGE_MACHINE_SUITE IMAGE_CUSTOMIZE="" IMAGE_PIP=""
  local IMAGE_PIP_ARGS="" IMAGE_PIP_HOOK=""
  # shellcheck disable=SC1090,SC1091
  source "$dir/recipe.sh"
  local args=(--out "$out" --ref "$(image_ref "$name")") f e
  if [[ -n $IMAGE_BASE ]]; then  # layers on top of another recipe's image
    build_image "$IMAGE_BASE" || return 1
    args+=(--base "$(image_archive "$IMAGE_BASE")")
    if [[ -n $IMAGE_PIP ]]; then
      pip_layer "$IMAGE_BASE" "$dir/$IMAGE_PIP" "$tmp/pip.tar" "$tmp" "$IMAGE_PIP_ARGS" \
        "$IMAGE_PIP_HOOK" || return 1
      args+=(--layer "$tmp/pip.tar")
    fi
  else
    debian_rootfs "$name" "$tmp/rootfs.tar" || return 1
    args+=(--layer "$tmp/rootfs.tar")
  fi
  for f in $IMAGE_FILES; do
    case $f in
      kubectl:*) args+=(--file "$BIN_DIR/$f") ;;
      *) args+=(--file "$HACK/images/$f") ;;
    esac
  done
  for e in $IMAGE_ENV; do args+=(--env "$e"); done
  [[ -z $IMAGE_ENTRYPOINT ]] || args+=(--entrypoint "$IMAGE_ENTRYPOINT")
  [[ -z $IMAGE_CMD ]] || args+=(--cmd "$IMAGE_CMD")
  [[ -z $IMAGE_USER ]] || args+=(--user "$IMAGE_USER")
  [[ -z $IMAGE_WORKDIR ]] || args+=(--workdir "$IMAGE_WORKDIR")
  oci_archive "${args[@]}"
}

build_pause_image() {  # build_pause_image OUT TMP
  (cd "$HACK/images/pause" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="" GO111MODULE=off \
     go build -trimpath -ldflags=-s -o "$2/pause" pause.go) || return 1
  oci_archive --out "$1" --ref "$(image_ref pause)" --file "$2/pause:/pause:0755" --entrypoint '["/pause"]'
}

buildah_() { buildah --root "$BUILDAH_ROOT" --runroot "$BUILDAH_ROOT/run" --storage-driver vfs "$@"; }

pip_layer() {  # pip_layer BASE REQUIREMENTS OUT_TAR TMP [PIP_ARGS [HOOK]]: what BASE's pip installs
  # REQUIREMENTS are installed from PyPI as wheels only, each file's hash required, with `pip
  # install --root` (as deploy/Dockerfile does) in a container of the BASE image (buildah, chroot
  # isolation, the host's network and CA bundle), then the tree under that root becomes the layer:
  # files under /usr/local, owned by root, modification times IMAGE_EPOCH. SOURCE_DATE_EPOCH makes
  # the compiled .pyc files hash-checked rather than stamped with those times. PIP_ARGS are added
  # to pip's (e.g. --no-deps); HOOK (under hack/images) runs here with that root before it is
  # packed, and may add files to it.
  local base=$1 req=$2 out=$3 pip_args=${5:-} hook=${6:-} ctr mnt
  local BUILDAH_ROOT=$4/buildah
  ctr=$(buildah_ from --quiet "oci-archive:$(image_archive "$base")") || return 1
  buildah_ copy --quiet "$ctr" "$req" /tmp/requirements.txt >/dev/null || return 1
  # shellcheck disable=SC2086  # PIP_ARGS: words for pip
  buildah_ run --isolation chroot --network host \
    --volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
    --env SOURCE_DATE_EPOCH="$IMAGE_EPOCH" --env PIP_DISABLE_PIP_VERSION_CHECK=1 "$ctr" -- \
    python3 -m pip install --quiet --no-cache-dir --root /install --root-user-action=ignore \
    --only-binary=:all: --require-hashes --no-warn-script-location $pip_args \
    -r /tmp/requirements.txt || return 1
  mnt=$(buildah_ mount "$ctr") || return 1
  [[ -z $hook ]] || "$HACK/images/$hook" "$mnt/install" >&2 || return 1
  tar -C "$mnt/install" --create --file "$out" --sort=name --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime=@"$IMAGE_EPOCH" --owner=0 --group=0 --numeric-owner usr || return 1
  buildah_ rm "$ctr" >/dev/null
}

build_controller_image() {  # build_controller_image OUT TMP: deploy/Dockerfile on the base image
  local out=$1 base ref
  base=$(image_ref base); ref=$(image_ref controller)
  build_image base || return 1
  local BUILDAH_ROOT=$2/buildah
  buildah_ pull --quiet "oci-archive:$(image_archive base)" >/dev/null || return 1
  buildah_ tag "$(buildah_ images --quiet | head -n 1)" "$base" || return 1
  buildah_ bud --quiet --isolation chroot --network host --timestamp 0 --pull=false \
    --volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
    --build-arg BASE_IMAGE="$base" -f "$HACK/../deploy/Dockerfile" -t "$ref" "$HACK/.." >/dev/null || return 1
  buildah_ push --quiet "$ref" "oci-archive:$out:$ref" >/dev/null || return 1
  buildah_ rmi --all --force >/dev/null
}

# Every build step below returns at its first failure (no `set -e` inside `||` lists).
build_image() {  # build_image NAME: the image's archive in the cache, built unless present
  local name=$1 out
  out=$(image_archive "$name")
  [[ -f $out ]] && return 0
  mkdir -p "$IMAGE_CACHE"
  local start=$SECONDS tmp
  tmp=$(mktemp -d "$IMAGE_CACHE/build-$name.XXXXXX")
  echo "building image $name (cached in $IMAGE_CACHE)" >&2
  case $name in
    pause) build_pause_image "$out.tmp" "$tmp" ;;
    controller) build_controller_image "$out.tmp" "$tmp" ;;
    *) build_recipe_image "$name" "$out.tmp" "$tmp" ;;
  esac || { rm -rf "$tmp" "$out.tmp"; return 1; }
  rm -rf "$tmp"
  mv "$out.tmp" "$out"
  echo "built image $name in $((SECONDS - start))s: $(image_ref "$name")" >&2
}

image_wanted() {  # image_wanted NAME: whether this run builds and imports the image
  # REAL_NODE_FRAMEWORKS: 1 for every framework's image, or the names of some (torch,...)
  local wanted=${REAL_NODE_FRAMEWORKS:-}
  wanted=" ${wanted//,/ } "
  [[ " ${IMAGE_FRAMEWORKS[*]} " != *" $1 "* || $wanted == " 1 " || $wanted == *" $1 "* ]]
}

build_images() {  # builds what is missing, then removes the cache's archives of other keys
  local n f keep=()
  for n in "${IMAGE_NAMES[@]}"; do
    keep+=("$(image_archive "$n")")
    image_wanted "$n" || continue
    build_image "$n" || return 1
  done
  for f in "$IMAGE_CACHE"/*.tar; do
    [[ -e $f && " ${keep[*]} " != *" $f "* ]] && rm -f "$f"
  done
  return 0
}

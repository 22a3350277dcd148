#!/usr/bin/env bash
# Builds the controller image from deploy/Dockerfile: `make image IMAGE=registry/name:tag`.
#   hack/build-image.sh IMAGE [BASE_IMAGE] [PUSH]
# The builder is $BUILDER, else the first that works of docker (with a reachable daemon), podman
# and buildah. BASE_IMAGE (optional) replaces the Dockerfile's python:3.11-slim, e.g. pinned by
# digest; PUSH non-empty pushes IMAGE afterwards. The image's OCI labels get the version from
# pyproject.toml and the git commit.
set -euo pipefail
image=${1:?usage: hack/build-image.sh IMAGE [BASE_IMAGE] [PUSH]}
base=${2:-}
push=${3:-}
cd "$(dirname "$0")/.."
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)
revision=$(git rev-parse HEAD 2>/dev/null || true)
args=(-f deploy/Dockerfile -t "$image" --build-arg "VERSION=$version"
  --build-arg "REVISION=$revision")
if [[ -n $base ]]; then args+=(--build-arg "BASE_IMAGE=$base"); fi
builder=${BUILDER:-}
if [[ -z $builder ]]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then builder=docker
  elif command -v podman >/dev/null; then builder=podman
  elif command -v buildah >/dev/null; then builder=buildah
  else
    echo "build-image: no image builder found (docker with a running daemon, podman or buildah)" >&2
    exit 1
  fi
fi
echo "build-image: $builder building $image" >&2
case $builder in
  buildah) buildah bud "${args[@]}" . ;;
  *) "$builder" build "${args[@]}" . ;;
esac
if [[ -n $push ]]; then
  "$builder" push "$image"
fi

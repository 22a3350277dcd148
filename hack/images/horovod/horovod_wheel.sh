#!/usr/bin/env bash
# horovod_wheel.sh ROOT: installs Horovod, built from its source distribution against the
# TensorFlow installed under ROOT, into ROOT (the horovod image's IMAGE_PIP_HOOK, run on the
# building machine by hack/lib/images.sh's pip_layer).
#
# PyPI has no Horovod wheel: the sdist (horovod-sdist.txt, pinned by hash) is compiled with this
# machine's CMake, g++ and Open MPI headers (Debian's cmake, g++, libopenmpi-dev: installed when
# missing), with TensorFlow's headers and flags from ROOT (the image's own TensorFlow, imported
# by this machine's Python 3.11 through PYTHONPATH), MPI and Gloo controllers, no PyTorch or
# MXNet. The build takes about 17 minutes on 2 cores, so the wheel is cached outside the
# repository, under $MPI_CONTROLLER_CACHE/wheels/horovod-KEY/, KEY hashing this script, the
# sdist's pin, the TensorFlow distribution under ROOT, the compiler's and Open MPI's versions
# (seed that directory with a wheel built the same way to skip the build). The wheel is
# then unpacked into ROOT's dist-packages (--no-deps: requirements.txt has its dependencies) and
# horovodrun written to ROOT/usr/local/bin.
set -euo pipefail
root=$1
here=$(cd "$(dirname "$0")" && pwd)
site=$(echo "$root"/usr/local/lib/python3.*/dist-packages)
[[ -d $site ]] || { echo "horovod_wheel.sh: no dist-packages under $root/usr/local/lib" >&2; exit 1; }
tf=$(cd "$site" && echo tensorflow_cpu-*.dist-info)
[[ -d $site/$tf ]] || { echo "horovod_wheel.sh: no tensorflow_cpu under $site" >&2; exit 1; }

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v mpicxx >/dev/null || missing+=(libopenmpi-dev)
if ((${#missing[@]})); then
  echo "horovod_wheel.sh: installing ${missing[*]} (Debian packages)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
python=$(command -v python3.11 || command -v python3)
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "horovod_wheel.sh: needs Python 3.11 (the image's) to build against" >&2; exit 1; }

key=$({ for f in "$here"/horovod_wheel.sh "$here"/horovod-sdist.txt; do
          printf '%s\n' "${f##*/}"; sha256sum <"$f"; done
        echo "$tf"; g++ -dumpfullversion; mpicxx --showme:version 2>&1; } | sha256sum | cut -c1-16)
cache=${MPI_CONTROLLER_CACHE:-$HOME/.cache/mpi-controller}/wheels/horovod-$key
wheel=$(echo "$cache"/horovod-*.whl)
if [[ ! -f $wheel ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  start=$SECONDS
  echo "horovod_wheel.sh: building Horovod against $tf (cached in $cache)" >&2
  "$python" -m pip download --quiet --no-deps --no-binary :all: --require-hashes \
    -r "$here/horovod-sdist.txt" -d "$tmp/sdist"
  PYTHONPATH=$site HOROVOD_WITH_TENSORFLOW=1 HOROVOD_WITHOUT_PYTORCH=1 HOROVOD_WITHOUT_MXNET=1 \
    HOROVOD_WITH_MPI=1 HOROVOD_WITH_GLOO=1 MAKEFLAGS=-j"$(nproc)" \
    "$python" -m pip wheel --quiet --no-deps --no-build-isolation -w "$tmp/wheel" \
    "$tmp"/sdist/horovod-*.tar.gz >"$tmp/build.log" 2>&1 \
    || { tail -n 40 "$tmp/build.log" >&2; exit 1; }
  mkdir -p "$cache"
  mv "$tmp"/wheel/horovod-*.whl "$cache/"
  wheel=$(echo "$cache"/horovod-*.whl)
  echo "horovod_wheel.sh: built $(basename "$wheel") in $((SECONDS - start))s" >&2
fi
"$python" -m pip install --quiet --no-deps --no-compile --target "$site" "$wheel"
mkdir -p "$root/usr/local/bin"
for script in "$site"/bin/*; do  # horovodrun: pip --target writes it under dist-packages/bin
  sed '1s|^#!.*|#!/usr/bin/python3|' "$script" >"$root/usr/local/bin/${script##*/}"
  chmod 0755 "$root/usr/local/bin/${script##*/}"
done
rm -rf "${site:?}/bin"
echo "horovod: $(basename "$wheel") installed" >&2

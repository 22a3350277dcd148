# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The image PyPI's binary wheels run on under Open MPI, the base of the horovod image: the wheels
# image's packages (Python 3, pip, the C++ runtime, GNU OpenMP; the base image's customize
# script) plus Open MPI's runtime (mpirun, the libraries Horovod's MPI build links to) and
# `python` for python3 (the MPI Operator's tensorflow-benchmarks launcher runs `python`).
IMAGE_VARIANT=essential
IMAGE_PACKAGES="netbase ca-certificates python3 python3-pip python-is-python3 libstdc++6 libgomp1 openmpi-bin"
IMAGE_CUSTOMIZE=base/customize.sh
IMAGE_CMD='["python3"]'

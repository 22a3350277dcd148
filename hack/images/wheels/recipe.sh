# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The image PyPI's binary wheels run on, the base of the jax, xgboost and paddle images: the base
# image's packages (Debian's essential set, Python 3, pip; its customize script) plus what
# manylinux wheels take from the system rather than bundle: the C++ runtime (libstdc++6, for
# numpy, scipy, jaxlib, xgboost, paddle) and GNU OpenMP (libgomp1, for paddle). The base image
# itself has neither: numpy fails there with "ImportError: libstdc++.so.6: cannot open shared
# object file: No such file or directory".
IMAGE_VARIANT=essential
IMAGE_PACKAGES="netbase ca-certificates python3 python3-pip libstdc++6 libgomp1"
IMAGE_CUSTOMIZE=base/customize.sh
IMAGE_CMD='["python3"]'

# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The base image: Debian's essential set with Python 3 and pip, the base of the controller image
# (deploy/Dockerfile's BASE_IMAGE).
IMAGE_VARIANT=essential
IMAGE_PACKAGES="netbase ca-certificates python3 python3-pip"
IMAGE_CMD='["python3"]'

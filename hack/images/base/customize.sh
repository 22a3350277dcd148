#!/bin/sh
# customize.sh ROOTFS: pip may install into the image's system Python (the image is the
# environment, as in the public python images).
set -eu
rm -f "$1"/usr/lib/python3.*/EXTERNALLY-MANAGED

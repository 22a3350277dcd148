# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The MPI image: Open MPI with an SSH server and client, the pi program built against it
# (/usr/local/bin/pi-openmpi), root and the user mpiuser (uid 1000). (MPICH: the mpich image.)
# sshd listens on 2222 and takes the job's mounted key as its host key: as root with
# /etc/ssh/sshd_config, as mpiuser with `-f /home/mpiuser/.sshd_config`.
IMAGE_VARIANT=apt
IMAGE_SKIP=cleanup/run
IMAGE_PACKAGES="netbase passwd openssh-server openssh-client openmpi-bin"
IMAGE_BUILD_PACKAGES="gcc libc6-dev libopenmpi-dev"
IMAGE_ENTRYPOINT='["/usr/local/bin/mpi-entrypoint"]'
IMAGE_ENV="LANG=C.UTF-8"

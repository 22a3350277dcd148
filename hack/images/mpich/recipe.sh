# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The MPICH image: the mpi image's layout (SSH server and client, root and mpiuser, the pi program
# as /usr/local/bin/pi-mpich, the same entry point; hack/images/mpi/customize.sh) with MPICH
# from Debian trixie (4.2.1, ch4:ucx, UCX 1.18) rather than bookworm's 4.0.2, whose UCX finalize
# can leave two ranks waiting for each other in MPI_Finalize (README, "The real node").
IMAGE_SUITE=trixie
IMAGE_VARIANT=apt
IMAGE_SKIP=cleanup/run
IMAGE_PACKAGES="netbase passwd openssh-server openssh-client mpich"
IMAGE_BUILD_PACKAGES="gcc libc6-dev libmpich-dev"
IMAGE_CUSTOMIZE=mpi/customize.sh
IMAGE_ENTRYPOINT='["/usr/local/bin/mpi-entrypoint"]'
IMAGE_ENV="LANG=C.UTF-8"

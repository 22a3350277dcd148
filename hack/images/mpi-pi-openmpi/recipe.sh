# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The mpi image laid out like upstream's mpi-pi:openmpi example image: `mpirun` is openmpi's and
# /home/mpiuser/pi runs the pi program built against it.
IMAGE_BASE=mpi
IMAGE_FILES="mpi-pi-openmpi/pi.sh:/home/mpiuser/pi:0755 mpi-pi-openmpi/mpirun.sh:/usr/local/bin/mpirun:0755"

# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The mpich image laid out like upstream's mpi-pi:mpich example image: `mpirun` is mpich's and
# /home/mpiuser/pi runs the pi program built against it.
IMAGE_BASE=mpich
IMAGE_FILES="mpi-pi-mpich/pi.sh:/home/mpiuser/pi:0755 mpi-pi-mpich/mpirun.sh:/usr/local/bin/mpirun:0755"

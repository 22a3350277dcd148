#!/bin/sh
exec /usr/bin/mpirun.openmpi "$@"

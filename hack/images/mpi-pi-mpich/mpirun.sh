#!/bin/sh
exec /usr/bin/mpirun.mpich "$@"

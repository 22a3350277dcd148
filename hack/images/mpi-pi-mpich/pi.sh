#!/bin/sh
exec /usr/local/bin/pi-mpich "$@"

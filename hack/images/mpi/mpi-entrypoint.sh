#!/bin/sh
# Entry point of the MPI image. In a launcher (K_MPI_JOB_ROLE=launcher) it first waits, up to
# $MPI_RESOLVE_TIMEOUT seconds (default 120), until its own name and every host in
# /etc/mpi/hostfile resolve, since a worker's DNS record may appear after the launcher starts.
# Then it runs the command it was given.
if [ "${K_MPI_JOB_ROLE:-}" = launcher ] && [ -f /etc/mpi/hostfile ]; then
  deadline=$(( $(date +%s) + ${MPI_RESOLVE_TIMEOUT:-120} ))
  for host in "$(hostname)" $(sed -e 's/[[:space:]].*//' -e 's/:.*//' /etc/mpi/hostfile); do
    until getent hosts "$host" >/dev/null; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "mpi-entrypoint: $host does not resolve" >&2
        break
      fi
      sleep 0.5
    done
  done
fi
exec "$@"

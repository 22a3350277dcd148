#!/bin/sh
# customize.sh ROOTFS BUILD_PACKAGES...: configures SSH for MPI jobs, adds mpiuser, compiles
# pi.c against each MPI the build packages bring (Open MPI: /usr/local/bin/pi-openmpi, MPICH:
# /usr/local/bin/pi-mpich), then removes the compilers again. Used by the mpi and mpich images.
set -eu
root=$1; shift
here=$(dirname "$0")
cat >"$root/etc/ssh/ssh_config.d/mpi.conf" <<'CONF'
Host *
    Port 2222
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
CONF
cat >"$root/etc/ssh/sshd_config.d/mpi.conf" <<'CONF'
Port 2222
HostKey /root/.ssh/id_rsa
StrictModes no
CONF
rm -f "$root"/etc/ssh/ssh_host_*
# sshd as root needs its privilege separation directory; the image keeps /run (mmdebstrap's
# cleanup of /run is skipped by the recipe) with only that in it.
find "$root/run" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
mkdir -m 0755 "$root/run/sshd"
chroot "$root" useradd --create-home --uid 1000 --shell /bin/bash mpiuser
cat >"$root/home/mpiuser/.sshd_config" <<'CONF'
Port 2222
PidFile /home/mpiuser/sshd.pid
HostKey /home/mpiuser/.ssh/id_rsa
StrictModes no
CONF
chroot "$root" chown mpiuser:mpiuser /home/mpiuser/.sshd_config
install -m 0755 "$here/mpi-entrypoint.sh" "$root/usr/local/bin/mpi-entrypoint"
cp "$here/pi.c" "$root/tmp/pi.c"
chroot "$root" apt-get install -qq -y --no-install-recommends "$@" >/dev/null
built=0
for impl in openmpi mpich; do
  if [ -x "$root/usr/bin/mpicc.$impl" ]; then
    chroot "$root" "mpicc.$impl" -O2 -o "/usr/local/bin/pi-$impl" /tmp/pi.c -lm
    built=$((built + 1))
  fi
done
[ "$built" -gt 0 ] || { echo "customize.sh: no mpicc.openmpi or mpicc.mpich to build pi with" >&2; exit 1; }
chroot "$root" apt-get purge -qq -y --autoremove "$@" >/dev/null
rm -f "$root/tmp/pi.c"

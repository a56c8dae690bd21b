#!/bin/sh
# Test scaffolding (never product code): PID 1 of `npm run test:image`'s namespaces, which enters a Debian root as a booted system would have it and runs one command there (chroot): its own /proc (the kernel log hidden), a read-only /sys, a /dev of a few devices, a fresh /run and /dev/shm, the host's resolver; and, when asked, the systemd stand-ins of test/support/agent (systemctl, service) over the root's own.
#
# Usage: unshare --pid --mount --fork --propagation private --kill-child enter.sh ROOT STANDINS|- hold|exit CMD...
# Prints "ottava-enter: exit N" with the command's status. With "hold" it then stays, and with it what the
# command started (the agent), until its standard input closes; the kernel ends the namespace's processes
# when it leaves. Nothing is mounted outside this mount namespace.
set -eu
root=$1 standins=$2 hold=$3
shift 3
mount -t proc proc "$root/proc"
# rsyslog's imklog would read (and so take) the host's kernel messages.
mount --bind /dev/null "$root/proc/kmsg"
mount -t sysfs -o ro sysfs "$root/sys"
mount -t tmpfs -o mode=0755,nosuid ottava-dev "$root/dev"
for n in null zero full random urandom tty; do
  : >"$root/dev/$n"
  mount --bind "/dev/$n" "$root/dev/$n"
done
mkdir "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 ottava-devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o mode=1777 ottava-shm "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
mount -t tmpfs -o mode=0755 ottava-run "$root/run"
if [ -L "$root/etc/resolv.conf" ] || [ ! -e "$root/etc/resolv.conf" ]; then
  rm -f "$root/etc/resolv.conf"
  : >"$root/etc/resolv.conf"
fi
mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
if [ "$standins" != - ]; then
  mount --bind "$standins/systemctl" "$root/usr/bin/systemctl"
  mount --bind "$standins/service" "$root/usr/sbin/service"
fi
status=0
chroot "$root" "$@" || status=$?
echo "ottava-enter: exit $status"
if [ "$hold" = hold ]; then
  cat >/dev/null
fi
exit "$status"

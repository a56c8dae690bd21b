#!/bin/sh
# Turns a stock Debian 12 (bookworm) system into an Ottava amphora: what Octavia's diskimage-builder elements (amphora-agent, haproxy-octavia, keepalived-octavia, ipvsadmin) put in an amphora image, from Debian's packages.
#
# Usage, as root: sh install.sh. It reads its sibling files (ottava-amphora-configure, ottava-vrrp-master,
# amphora-agent.service) from its own directory. It serves both ways an amphora boots: run once on a stock Debian 12 instance to bake
# the image (docs/deploying.md), or at first boot from the user data when no image is baked. Running it again
# does the same again. It installs but does not start the agent: ottava-amphora-configure does, once the
# agent's certificate and configuration are in place.
set -eu

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
log() { echo "install.sh: $*" >&2; }
fail() {
  log "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || fail "run it as root"
# shellcheck disable=SC1091
. /etc/os-release
[ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ] || fail "this is ${PRETTY_NAME:-an unknown system}, not Debian 12 (bookworm)"
for f in ottava-amphora-configure ottava-vrrp-master amphora-agent.service; do
  [ -f "$here/$f" ] || fail "$here/$f is missing: install.sh needs the files of its directory"
done
# Whether systemd runs this system (a booted instance), or it is an image being built (a chroot).
booted=false
[ -d /run/systemd/system ] && booted=true

export DEBIAN_FRONTEND=noninteractive
work=$(mktemp -d)
policy=/usr/sbin/policy-rc.d
cleanup() {
  rm -rf "$work"
  [ -z "${own_policy:-}" ] || rm -f "$policy"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# No daemon starts while the packages install: Debian's haproxy would start on its stock configuration.
# deb-systemd-invoke and invoke-rc.d honour policy-rc.d.
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  own_policy=1
fi

log "installing Debian's haproxy, keepalived, ipvsadm, the amphora agent (python3-octavia) and what they use"
apt-get update
# rsyslog: the agent logs to its socket. iproute2: the amphora-haproxy namespace. nftables: the LVS
# masquerade rules. iputils-ping: HAProxy's PING health monitors. python3-boto3: ottava-amphora-configure.
apt-get install -y --no-install-recommends \
  haproxy keepalived ipvsadm python3-octavia python3-boto3 \
  rsyslog logrotate iproute2 nftables iputils-ping procps kmod ca-certificates

log "laying out what the agent expects of its image"
# The agent's files (Octavia's element amphora-agent): certificates and configuration in /etc/octavia, its
# state in /var/lib/octavia. The key in certs/ is root's alone.
install -d -m 0755 /etc/octavia /var/lib/octavia /var/lib/haproxy /etc/ottava
install -d -m 0700 /etc/octavia/certs
chmod 0700 /etc/octavia/certs
# The group HAProxy runs as, added to every haproxy.cfg the agent checks and runs (haproxy-octavia).
printf 'global\n    group nogroup\n' >/var/lib/octavia/haproxy-default-user-group.conf
# The external check of PING health monitors (haproxy-octavia's 21-create-ping-wrapper).
cat >/var/lib/octavia/ping-wrapper.sh <<'EOF'
#!/bin/bash
if [[ $HAPROXY_SERVER_ADDR =~ ":" ]]; then
    /usr/bin/ping -6 -q -n -w 1 -c 1 $HAPROXY_SERVER_ADDR > /dev/null 2>&1
else
    /usr/bin/ping -q -n -w 1 -c 1 $HAPROXY_SERVER_ADDR > /dev/null 2>&1
fi
EOF
chmod 0755 /var/lib/octavia/ping-wrapper.sh
# The UDP and SCTP listeners' masquerade rules: Debian's agent runs octavia-agent-lvs-masquerade, which
# Debian ships in its octavia-agent package; that package's dependencies (an OpenStack client, dbconfig,
# cryptsetup, ...) are not needed, so the one file is taken from it.
chown _apt "$work" 2>/dev/null || true
(cd "$work" && apt-get download octavia-agent)
dpkg-deb --fsys-tarfile "$work"/octavia-agent_*.deb | tar -x -C "$work" ./usr/bin/octavia-agent-lvs-masquerade
install -m 0755 "$work/usr/bin/octavia-agent-lvs-masquerade" /usr/local/sbin/octavia-agent-lvs-masquerade
# The agent's log socket (amphora-agent's 55-octavia-socket.conf).
cat >/etc/rsyslog.d/55-octavia-socket.conf <<'EOF'
module(load="imuxsock")
input(type="imuxsock"
      Socket="/run/rsyslog/octavia/log"
      CreatePath="on")
EOF
# The agent's own log file (gunicorn's), rotated in place.
cat >/etc/logrotate.d/amphora-agent <<'EOF'
/var/log/amphora-agent.log {
    daily
    rotate 10
    missingok
    notifempty
    compress
    delaycompress
    copytruncate
}
EOF
# The kernel settings of haproxy-octavia's 20-haproxy-tune-kernel. The amphora-haproxy namespace loads
# them (its unit runs sysctl --system there); fs.nr_open matches LimitNOFILE of the agent's HAProxy units.
cat >/etc/sysctl.d/60-octavia-amphora.conf <<'EOF'
net.ipv4.tcp_max_tw_buckets = 5800000
net.ipv4.tcp_max_orphans = 5800000
net.ipv4.tcp_max_syn_backlog = 100000
net.ipv4.tcp_keepalive_time = 300
net.ipv4.tcp_tw_reuse = 1
net.core.somaxconn = 65534
net.ipv4.tcp_synack_retries = 3
net.core.netdev_max_backlog = 100000
fs.file-max = 2600000
fs.nr_open = 2600000
-net.netfilter.nf_conntrack_tcp_timeout_time_wait = 5
-net.netfilter.nf_conntrack_tcp_timeout_fin_wait = 5
net.ipv4.tcp_mtu_probing = 1
net.ipv4.tcp_fin_timeout = 5
net.ipv4.ip_nonlocal_bind = 1
net.ipv6.ip_nonlocal_bind = 1
net.core.rmem_max = 67108864
net.core.wmem_max = 67108864
net.ipv4.tcp_rmem = 4096 87380 33554432
net.ipv4.tcp_wmem = 4096 87380 33554432
net.ipv4.ip_local_port_range = 1025 65534
net.ipv4.ping_group_range = 0 2147483647
EOF
# conntrack's settings above need its module.
echo nf_conntrack >/etc/modules-load.d/octavia-amphora.conf

log "installing ottava-amphora-configure, ottava-vrrp-master and amphora-agent.service"
install -m 0755 "$here/ottava-amphora-configure" /usr/local/sbin/ottava-amphora-configure
# keepalived's notify_master with the vpc network driver: reports a promotion to the health managers (its
# nsenter is util-linux's, an essential package).
install -m 0755 "$here/ottava-vrrp-master" /usr/local/sbin/ottava-vrrp-master
install -m 0644 "$here/amphora-agent.service" /usr/lib/systemd/system/amphora-agent.service
# The agent writes and starts its own units for HAProxy and keepalived; Debian's stay off (haproxy-octavia's
# 20-disable-default-haproxy).
systemctl disable --quiet haproxy.service keepalived.service
if $booted; then
  systemctl stop haproxy.service keepalived.service
  systemctl daemon-reload
  modprobe nf_conntrack || true
  sysctl --quiet --system || log "some kernel settings were not applied (sysctl --system)"
  # A running rsyslog reads 55-octavia-socket.conf when it restarts.
  systemctl try-restart rsyslog.service
fi
apt-get clean
log "done: $(dpkg-query -W -f '${Package} ${Version}, ' haproxy keepalived ipvsadm python3-octavia python3-boto3 | sed 's/, $//')"

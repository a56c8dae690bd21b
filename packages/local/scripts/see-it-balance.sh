#!/usr/bin/env bash
# "See it balance traffic" (README), step 3: against `npm start -- --dataplane haproxy --cli-standin 9877`,
# start two web servers on loopback, make a load balancer with the real `openstack` CLI (listener, pool,
# both servers as members), then curl its VIP four times: the answers alternate between the two.
# Each openstack command is printed before it runs. The servers stop when the script ends; the load
# balancer stays (`openstack --os-cloud ottava loadbalancer delete --cascade see-it-balance` removes it).
#
# The ports are npm start's: OTTAVA_BIND_PORT (9876) and OTTAVA_CLI_STANDIN_PORT (9877); the members
# listen on 8001 and 8002 and the listener on 8080 unless SEE_IT_MEMBER_PORTS ("8001 8002") and
# SEE_IT_LISTENER_PORT say otherwise. The CLI's cloud is written to a temporary clouds.yaml
# (OS_CLIENT_CONFIG_FILE), so ~/.config/openstack is left alone.
set -euo pipefail

api_port=${OTTAVA_BIND_PORT:-9876}
standin_port=${OTTAVA_CLI_STANDIN_PORT:-9877}
read -r -a member_ports <<<"${SEE_IT_MEMBER_PORTS:-8001 8002}"
listener_port=${SEE_IT_LISTENER_PORT:-8080}
name=${SEE_IT_NAME:-see-it-balance}
subnet=5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11

work=$(mktemp -d)
servers=()
stop() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop EXIT

# Two members: each serves a page that names it.
for i in "${!member_ports[@]}"; do
  mkdir -p "$work/member-$((i + 1))"
  echo "member $((i + 1)) (127.0.0.1:${member_ports[$i]})" >"$work/member-$((i + 1))/index.html"
  python3 -m http.server "${member_ports[$i]}" --bind 127.0.0.1 --directory "$work/member-$((i + 1))" >/dev/null 2>&1 &
  servers+=("$!")
done

cat >"$work/clouds.yaml" <<YAML
clouds:
  ottava:
    auth_type: none
    auth:
      endpoint: http://127.0.0.1:${standin_port}
    load_balancer_endpoint_override: http://127.0.0.1:${api_port}
YAML
export OS_CLIENT_CONFIG_FILE="$work/clouds.yaml"

os() {
  echo "+ openstack $*" >&2
  openstack --os-cloud ottava "$@"
}

os loadbalancer create --name "$name" --project demo --vip-subnet-id "$subnet" --wait -f value -c id >/dev/null
os loadbalancer listener create --name "$name" --protocol HTTP --protocol-port "$listener_port" --wait "$name" -f value -c id >/dev/null
os loadbalancer pool create --name "$name" --listener "$name" --protocol HTTP --lb-algorithm ROUND_ROBIN --wait -f value -c id >/dev/null
for port in "${member_ports[@]}"; do
  os loadbalancer member create --address 127.0.0.1 --protocol-port "$port" --wait "$name" -f value -c id >/dev/null
done
vip=$(os loadbalancer show "$name" -f value -c vip_address)

for _ in 1 2 3 4; do
  echo "+ curl -s http://$vip:$listener_port/" >&2
  curl -s --max-time 5 "http://$vip:$listener_port/"
done

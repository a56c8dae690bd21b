#!/usr/bin/python3
"""The calls Ansible's and other Python users' openstacksdk (Debian's python3-openstacksdk, 0.101) makes,
against Ottava at argv[1] under noauth: create a load balancer, a listener, a pool, a health monitor,
an L7 policy and a rule, waiting for the load balancer after each, then find them again through the
list filters the SDK sends. Prints one JSON object; exits non-zero on an error."""
import json
import sys

import openstack

url, subnet, project = sys.argv[1:4]
conn = openstack.connection.Connection(auth_type="none", auth={"endpoint": url}, load_balancer_endpoint_override=url)
lbs = conn.load_balancer


def settle(lb):
    return lbs.wait_for_load_balancer(lb.id, status="ACTIVE", failures=["ERROR"], interval=0.05, wait=30)


lb = lbs.create_load_balancer(name="sdk-lb", vip_subnet_id=subnet, project_id=project)
settle(lb)
listener = lbs.create_listener(name="sdk-listener", load_balancer_id=lb.id, protocol="HTTP", protocol_port=80)
settle(lb)
pool = lbs.create_pool(name="sdk-pool", listener_id=listener.id, protocol="HTTP", lb_algorithm="ROUND_ROBIN")
settle(lb)
monitor = lbs.create_health_monitor(name="sdk-monitor", pool_id=pool.id, type="HTTP", delay=5, timeout=3, max_retries=2)
settle(lb)
policy = lbs.create_l7_policy(name="sdk-policy", listener_id=listener.id, action="REJECT")
settle(lb)
rule = lbs.create_l7_rule(policy, type="PATH", compare_type="STARTS_WITH", value="/sdk")
settle(lb)

print(json.dumps({
    "loadbalancer": lb.id,
    "listener": listener.id,
    "pool": pool.id,
    "monitor": monitor.id,
    "l7policy": policy.id,
    "rule": rule.id,
    "found": {
        "listeners?load_balancer_id": [x.id for x in lbs.listeners(load_balancer_id=lb.id)],
        "find_listener": lbs.find_listener("sdk-listener").id,
        "health_monitors?pool_id": [x.id for x in lbs.health_monitors(pool_id=pool.id)],
        "l7_rules?l7policy_id": [x.id for x in lbs.l7_rules(policy)],
        "pools?loadbalancer_id": [x.id for x in lbs.pools(loadbalancer_id=lb.id)],
    },
}))

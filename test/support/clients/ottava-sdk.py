#!/usr/bin/python3
"""Ottava's openstacksdk functions (clients/python, ottavaclient.sdk, as installed), against Ottava at
argv[1] under noauth, on the objects test/cli-plugin.e2e.test.ts made: resize the load balancer named
argv[2] to the flavor named argv[3], cancelling a first attempt at once, then resize it again and
wait; a cancel with no resize running; a cross-pool update of the pools named argv[4:] (additive).
Prints one JSON object of what it saw; exits non-zero on an unexpected error."""
import json
import sys

import openstack
from openstack import exceptions

from ottavaclient import sdk

url, lb_name, flavor_name, *pool_names = sys.argv[1:]
conn = openstack.connection.Connection(auth_type="none", auth={"endpoint": url}, load_balancer_endpoint_override=url)
lbs = conn.load_balancer
seen = {}

lb = lbs.find_load_balancer(lb_name, ignore_missing=False)
flavor = lbs.find_flavor(flavor_name, ignore_missing=False)
seen["flavor_before"] = lb.flavor_id

# Cancelled straight after the 202: the flow is still building the new amphora.
sdk.resize_load_balancer(conn, lb, flavor)
sdk.cancel_load_balancer_resize(conn, lb)
seen["after_cancel"] = sdk.wait_for_load_balancer(conn, lb, interval=0.05, wait=60).flavor_id

sdk.resize_load_balancer(conn, lb.id, flavor.id)
done = sdk.wait_for_load_balancer(conn, lb.id, interval=0.05, wait=60)
seen["after_resize"] = [done.provisioning_status, done.flavor_id]

try:
    sdk.cancel_load_balancer_resize(conn, lb)
    seen["idle_cancel"] = "accepted"
except exceptions.HttpException as e:
    seen["idle_cancel"] = [e.status_code, e.details]

try:
    sdk.batch_update_members_across_pools(conn, [{"address": "10.9.9.9", "protocol_port": 80}])
    seen["bad_member"] = "sent"
except ValueError as e:
    seen["bad_member"] = str(e)

pools = [lbs.find_pool(name, ignore_missing=False) for name in pool_names]
members = [{"pool_id": pool, "address": "10.9.0.%d" % (i + 1), "protocol_port": 8080} for i, pool in enumerate(pools)]
lb_id = sdk.batch_update_members_across_pools(conn, members, additive_only=True)
seen["cross_pool_lb"] = sdk.wait_for_load_balancer(conn, lb_id, interval=0.05, wait=60).id
seen["members"] = {pool.name: sorted("%s:%d" % (m.address, m.protocol_port) for m in lbs.members(pool)) for pool in pools}
print(json.dumps(seen))

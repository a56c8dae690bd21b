"""openstacksdk functions for Ottava's endpoints, each taking a Connection. Like the SDK's own
load-balancer calls, a load balancer, flavor or pool is given by ID or as an SDK resource (find one by
name with conn.load_balancer.find_load_balancer, find_flavor, find_pool), and a refused request
raises the SDK's HttpException (its details carry Octavia's faultstring)."""
from openstack import exceptions
from openstack import resource

from ottavaclient import body as _body


def _id(value):
    return resource.Resource._get_id(value)


def resize_load_balancer(conn, load_balancer, flavor):
    """Start a resize of `load_balancer` to `flavor` (PUT .../resize). Returns None; see wait_for_load_balancer."""
    url = _body.RESIZE_URL.format(uuid=_id(load_balancer))
    resp = conn.load_balancer.put(url, json={'new_flavor_id': _id(flavor)})
    exceptions.raise_from_response(resp)


def cancel_load_balancer_resize(conn, load_balancer):
    """Cancel the resize in progress of `load_balancer` (DELETE .../resize). Returns None."""
    resp = conn.load_balancer.delete(_body.RESIZE_URL.format(uuid=_id(load_balancer)))
    exceptions.raise_from_response(resp)


def batch_update_members_across_pools(conn, members, additive_only=False):
    """Set the members of several pools of one load balancer at once (PUT /v2/lbaas/pools/members).

    `members`: dicts as for create_member, each with its pool's ID (or Pool) in `pool_id`; checked as
    the CLI checks its file (ValueError) before the request. Returns the load balancer's ID, to wait on.
    """
    members = [dict(m, pool_id=_id(m['pool_id'])) if isinstance(m, dict) and 'pool_id' in m else m for m in members]
    checked = _body.check_members({'members': members})
    params = {'additive_only': 'true'} if additive_only else None
    resp = conn.load_balancer.put(_body.CROSS_POOL_MEMBERS_URL, json={'members': checked}, params=params)
    exceptions.raise_from_response(resp)
    return conn.load_balancer.get_pool(checked[0]['pool_id']).loadbalancers[0]['id']


def wait_for_load_balancer(conn, load_balancer, interval=2, wait=300):
    """Wait until `load_balancer` is ACTIVE, as the SDK waits (wait_for_status on provisioning_status):
    raises ResourceFailure when it goes to ERROR, ResourceTimeout after `wait` seconds. Returns it."""
    return conn.load_balancer.wait_for_load_balancer(
        _id(load_balancer), status='ACTIVE', failures=['ERROR'], interval=interval, wait=wait)

"""Ottava's additions to the OpenStack clients: the load-balancer resize and the cross-pool member
update, as OpenStackClient commands (ottavaclient.osc) and openstacksdk functions (ottavaclient.sdk)."""

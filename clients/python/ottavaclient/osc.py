"""OpenStackClient commands for Ottava's endpoints, in python-octaviaclient's manner: names resolved
by its look-ups (v2_utils.get_resource_id: by name or ID through the list endpoints), API errors
raised as its OctaviaClientException ("<faultstring> (HTTP <code>) (Request-ID: <id>)"), and --wait
by its wait_for_active, which polls the load balancer's provisioning_status and fails on ERROR."""
from osc_lib.command import command
from osc_lib import exceptions

from octaviaclient.api.v2.octavia import correct_return_codes
from octaviaclient.osc.v2 import utils as v2_utils

from ottavaclient import body as _body

# Accept: application/json, as OctaviaAPI sends on its own calls.
_JSON = {'Accept': 'application/json'}


@correct_return_codes
def _resize(client, lb_id, flavor_id):
    return client.create(_body.RESIZE_URL.format(uuid=lb_id), method='PUT', headers=_JSON,
                         json={'new_flavor_id': flavor_id})


@correct_return_codes
def _cancel_resize(client, lb_id):
    return client.delete(_body.RESIZE_URL.format(uuid=lb_id), headers=_JSON)


@correct_return_codes
def _cross_pool_update(client, members, additive_only):
    params = {'additive_only': 'true'} if additive_only else None
    return client.create(_body.CROSS_POOL_MEMBERS_URL, method='PUT', headers=_JSON,
                         json={'members': members}, params=params)


def _lb_id(client, name_or_id):
    return v2_utils.get_resource_id(client.load_balancer_list, 'loadbalancers', name_or_id)


def _wait(client, lb_id):
    v2_utils.wait_for_active(status_f=client.load_balancer_show, res_id=lb_id)


def _wait_option(parser):
    parser.add_argument('--wait', action='store_true', help='Wait for action to complete.')


class ResizeLoadBalancer(command.Command):
    """Resize a load balancer: move it to another flavor of the same topology"""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--flavor', metavar='<flavor>', required=True,
                            help='Name or UUID of the new flavor.')
        parser.add_argument('loadbalancer', metavar='<load_balancer>',
                            help='Name or UUID of the load balancer.')
        _wait_option(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.load_balancer
        lb_id = _lb_id(client, parsed_args.loadbalancer)
        flavor_id = v2_utils.get_resource_id(client.flavor_list, 'flavors', parsed_args.flavor)
        _resize(client, lb_id, flavor_id)
        if parsed_args.wait:
            _wait(client, lb_id)


class CancelResizeLoadBalancer(command.Command):
    """Cancel a load balancer's resize in progress: it keeps its flavor"""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('loadbalancer', metavar='<load_balancer>',
                            help='Name or UUID of the load balancer.')
        _wait_option(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.load_balancer
        lb_id = _lb_id(client, parsed_args.loadbalancer)
        _cancel_resize(client, lb_id)
        if parsed_args.wait:
            _wait(client, lb_id)


class BatchSetMember(command.Command):
    """Set the members of several pools of one load balancer at once (the cross-pool member update)

    <file> holds the API's body, JSON or YAML: {"members": [...]}, each member as for
    "loadbalancer member create" plus its pool ("pool_id": a name or UUID). In each pool named, members
    are matched on address and protocol port: new ones are created, matched ones updated, and, without
    --additive-only, the pool's members the file does not list are deleted.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('file', metavar='<file>',
                            help='JSON or YAML file holding {"members": [...]}.')
        parser.add_argument('--additive-only', action='store_true', default=False,
                            help='Only create and update members: delete none.')
        _wait_option(parser)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.load_balancer
        try:
            members = _body.check_members(_body.load_file(parsed_args.file))
        except _body.BodyError as e:
            raise exceptions.CommandError(str(e)) from e
        members = _body.with_pool_ids(
            members, lambda name: v2_utils.get_resource_id(client.pool_list, 'pools', name))
        _cross_pool_update(client, members, parsed_args.additive_only)
        if parsed_args.wait:
            # As "loadbalancer member create --wait": the load balancer of the (first) pool.
            pool = client.pool_show(members[0]['pool_id'])
            _wait(client, pool['loadbalancers'][0]['id'])

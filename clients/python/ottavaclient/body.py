"""What the CLI and the SDK functions share: the two endpoints' paths (below the API's version), and
the cross-pool member update's body (PUT /v2/lbaas/pools/members), read and checked before any
request: the CLI's file and the SDK's list go through the same check."""
import json

import yaml

RESIZE_URL = '/lbaas/loadbalancers/{uuid}/resize'
CROSS_POOL_MEMBERS_URL = '/lbaas/pools/members'


class BodyError(ValueError):
    """The body cannot be sent: what is wrong, and where."""


def load_file(path):
    """The body in a JSON or YAML file (JSON first: PyYAML refuses the tabs a JSON file may hold)."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError as e:
        raise BodyError('Unable to read {0}: {1}'.format(path, e.strerror)) from e
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise BodyError('Unable to parse {0} as JSON or YAML: {1}'.format(path, _yaml_problem(e))) from e


def _yaml_problem(e):
    """PyYAML's problem and where, without its multi-line excerpt of the file."""
    mark = getattr(e, 'problem_mark', None)
    problem = getattr(e, 'problem', None)
    if problem and mark:
        return '{0} (line {1}, column {2})'.format(problem, mark.line + 1, mark.column + 1)
    return ' '.join(str(e).split())


def check_members(body):
    """The members of a body {"members": [...]}, each a mapping naming its pool (by name or ID, in
    `pool_id`), its address and its protocol port, as the update matches members on them. The API
    checks every other field."""
    if not isinstance(body, dict) or set(body) != {'members'}:
        raise BodyError('The body must be an object whose only key is "members".')
    members = body['members']
    if not isinstance(members, list) or not members:
        raise BodyError('"members" must be a list of at least one member.')
    for i, m in enumerate(members):
        where = 'members[{0}]'.format(i)
        if not isinstance(m, dict):
            raise BodyError('{0} must be an object.'.format(where))
        if not isinstance(m.get('pool_id'), str) or not m['pool_id']:
            raise BodyError('{0} must name its pool (by name or ID) in "pool_id".'.format(where))
        if not isinstance(m.get('address'), str):
            raise BodyError('{0} must have an "address" string.'.format(where))
        port = m.get('protocol_port')
        if not isinstance(port, int) or isinstance(port, bool):
            raise BodyError('{0} must have an integer "protocol_port".'.format(where))
    return members


def with_pool_ids(members, resolve):
    """The members with each `pool_id` replaced by `resolve(name_or_id)`, the pool's ID, resolved once
    per distinct value."""
    ids = {}
    for m in members:
        if m['pool_id'] not in ids:
            ids[m['pool_id']] = resolve(m['pool_id'])
    return [dict(m, pool_id=ids[m['pool_id']]) for m in members]

# Loaded (through PYTHONPATH) only by the `openstack` processes test/cli.e2e.test.ts starts.
# python-octaviaclient's --wait polls the object every 3 s (osc_lib's wait_for_status and
# wait_for_delete with sleep_time=3); Ottava's no-op flows finish well within that, so the test
# asks for a shorter interval through OTTAVA_CLI_POLL_SECONDS. The requests the client makes
# are unchanged; only the pause between two status polls is.
import os

_poll = os.environ.get("OTTAVA_CLI_POLL_SECONDS")
if _poll:
    try:
        from osc_lib import utils as _osc_utils
    except ImportError:  # not the openstack CLI
        _osc_utils = None
    if _osc_utils is not None:
        _interval = float(_poll)
        _wait_for_status = _osc_utils.wait_for_status
        _wait_for_delete = _osc_utils.wait_for_delete

        def wait_for_status(*args, **kwargs):
            kwargs["sleep_time"] = _interval
            return _wait_for_status(*args, **kwargs)

        def wait_for_delete(*args, **kwargs):
            kwargs["sleep_time"] = _interval
            return _wait_for_delete(*args, **kwargs)

        _osc_utils.wait_for_status = wait_for_status
        _osc_utils.wait_for_delete = wait_for_delete

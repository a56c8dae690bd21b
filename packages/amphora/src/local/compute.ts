// The local compute driver: an amphora instance is a directory of this machine (AmphoraHost) whose HAProxy runs as a process, what Octavia's nova_driver (compute/drivers/nova_driver.py build, get_amphora, delete) makes of a Nova server.
//
// The compute id is the amphora's id (its directory's name). The server certificate Octavia puts on
// the config drive is written to the directory (0600). The management address is loopback: there is
// no agent to reach here, the amphora driver works on the directory itself.
import { DriverError, type ComputeDriver, type ComputeInstance } from "@ottava/core";
import type { AmphoraHost } from "./host";

/** The amphora's lb_network_ip: this machine. */
export const LOCAL_LB_NETWORK_IP = "127.0.0.1";

export class LocalComputeDriver implements ComputeDriver {
  constructor(private readonly host: AmphoraHost) {}

  /** The amphora's directory, with the server certificate its config drive would hold; compute flavor and zone mean nothing here. */
  async build(req: Parameters<ComputeDriver["build"]>[0]): Promise<string> {
    await this.host.create(req.amphoraId, req.serverPem);
    return req.amphoraId;
  }

  async getInstance(computeId: string): Promise<ComputeInstance> {
    if (!this.host.exists(computeId))
      throw new DriverError(`Local amphora instance ${computeId} does not exist (no ${this.host.dirOf(computeId)})`);
    return { compute_id: computeId, lb_network_ip: LOCAL_LB_NETWORK_IP, image_id: null, compute_flavor: null, cached_zone: null };
  }

  /** The instance goes: its HAProxy stops (its ports close) and its directory is removed. Deleting one that is gone is no error. */
  async delete(computeId: string): Promise<void> {
    await this.host.destroy(computeId);
  }
}

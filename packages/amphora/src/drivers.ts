// The controller's drivers, picked from the settings as Octavia's [controller_worker] amphora_driver,
// compute_driver and network_driver pick its own. Every process that calls a driver (the task Lambdas,
// the API for the VIP, the health manager for zombies, npm start) builds them here.
import type { Config, Drivers } from "@ottava/core";
import { noopDrivers } from "./noop";

export function createDrivers(config: Config): Drivers {
  const noop = noopDrivers(config.noopFaults, config.noopLatency);
  const unavailable = (setting: string, name: string) => new Error(`OTTAVA_${setting}=${name} is not available in this build`);
  if (config.amphoraDriver !== "noop") throw unavailable("AMPHORA_DRIVER", config.amphoraDriver);
  if (config.computeDriver !== "noop") throw unavailable("COMPUTE_DRIVER", config.computeDriver);
  if (config.networkDriver !== "noop") throw unavailable("NETWORK_DRIVER", config.networkDriver);
  return noop;
}

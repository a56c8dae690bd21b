// The drivers the API Lambda calls, apart from createDrivers (drivers.ts): the API imports this file
// alone (@ottava/amphora/api-drivers), so its bundle holds neither the REST amphora driver nor the
// AWS drivers' dynamic import (esbuild makes a chunk of every import() in the files it bundles, called or not).
import type { Config, Drivers } from "@ottava/core";
import { noopDrivers } from "./noop";
import { createCertManager } from "./certs/local";

/**
 * The drivers the API Lambda calls: the network driver (VIPs) and the certificate manager (listeners'
 * TLS references). It never calls a compute or amphora driver, so its bundle leaves out the REST
 * amphora driver and its configuration renderers. On AWS there is no local data plane: the network
 * driver is the no-op one (OTTAVA_NETWORK_DRIVER=local fails here as in createDrivers).
 */
export function createApiDrivers(config: Config): Pick<Drivers, "network" | "certificates"> {
  if (config.networkDriver === "local") throw new Error("OTTAVA_NETWORK_DRIVER=local runs only under npm start (--dataplane haproxy)");
  return { network: noopDrivers().network, certificates: createCertManager(config) };
}

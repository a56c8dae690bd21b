// The controller's drivers, picked from the settings as Octavia's [controller_worker] amphora_driver,
// compute_driver and network_driver pick its own. Every process that calls a driver (the task Lambdas,
// the health manager for zombies, npm start) builds them here; the API builds its own (api-drivers.ts).
import type { CloudIdStore, ComputeDriver, Config, Drivers } from "@ottava/core";
import type { AwsClientDecorator } from "@ottava/aws";
import { noopDrivers } from "./noop";
import { vpcNetwork } from "./api-drivers";
import { createCertManager } from "./certs/local";
import { createRestAmphoraDriver, type RestDriverSetup } from "./rest/driver";
import type { LocalDataplane } from "./local/dataplane";

/**
 * What a process may give the drivers beyond the settings: the REST amphora driver's client certificate
 * issuer and CA; `local`, the local data plane (npm start's: its data
 * directory, the table, the heartbeat target and key), which the "local" drivers run on; and `noop`,
 * the no-op drivers to use where the settings pick them (else noopDrivers(): tests and npm start give
 * them with injected faults or latency, @ottava/amphora/testing/noop-faults).
 */
export type CreateDriversOptions = RestDriverSetup & {
  local?: LocalDataplane | undefined;
  noop?: Drivers | undefined;
  /** Done to each AWS client the AWS drivers make: the process's classifyUnavailable (@ottava/edge). */
  decorateAwsClient?: AwsClientDecorator | undefined;
  /** Where the vpc network driver keeps the UUIDs of its AWS ids (createStores(...).cloudIds). */
  cloudIds?: CloudIdStore | undefined;
};

export function createDrivers(config: Config, options: CreateDriversOptions = {}): Drivers {
  const noop = options.noop ?? noopDrivers();
  // The local drivers run only where a local data plane was opened (npm start), not in a task Lambda.
  const local = (setting: string): LocalDataplane => {
    if (!options.local) throw new Error(`OTTAVA_${setting}=local runs only under npm start (--dataplane haproxy)`);
    return options.local;
  };
  const certificates = createCertManager(config);
  const network =
    config.networkDriver === "local"
      ? local("NETWORK_DRIVER").network
      : config.networkDriver === "vpc"
        ? vpcNetwork(config, options.cloudIds, options.log)
        : noop.network;
  const amphora =
    config.amphoraDriver === "rest"
      ? createRestAmphoraDriver(config, certificates, network, options)
      : config.amphoraDriver === "local"
        ? local("AMPHORA_DRIVER").amphoraDriver(certificates)
        : noop.amphora;
  const compute =
    config.computeDriver === "local"
      ? local("COMPUTE_DRIVER").compute
      : config.computeDriver === "ec2"
        ? ec2Compute(config, options)
        : noop.compute;
  return { compute, network, amphora, certificates };
}

/**
 * The EC2 compute driver (@ottava/aws), loaded on its first call: the AWS SDK's EC2 client (about 1 MB
 * minified) stays in a chunk of its own, which only a process whose settings pick ec2 ever loads. The
 * amphorae's client_ca.pem is the CA that issues the controller's client certificate: the settings'
 * CA certificate, else the one the process gives (npm start's local CA), as for the REST driver.
 */
function ec2Compute(config: Config, options: CreateDriversOptions): ComputeDriver {
  let driver: Promise<Required<ComputeDriver>> | undefined;
  const controllerCa = async () =>
    config.caCertificate ?? (typeof options.caCertificate === "function" ? await options.caCertificate() : options.caCertificate);
  const load = () =>
    (driver ??= import("@ottava/aws").then(
      (aws) =>
        new aws.Ec2ComputeDriver(aws.ec2Client(config, options.decorateAwsClient), config, {
          secrets: aws.secretsManagerClient(config),
          controllerCa,
          log: options.log,
        }),
    ));
  return {
    build: async (req) => (await load()).build(req),
    getInstance: async (computeId) => (await load()).getInstance(computeId),
    delete: async (computeId, amphoraId) => (await load()).delete(computeId, amphoraId),
    createServerGroup: async (loadBalancerId) => (await load()).createServerGroup!(loadBalancerId),
    deleteServerGroup: async (serverGroupId) => (await load()).deleteServerGroup!(serverGroupId),
  };
}

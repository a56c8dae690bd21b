// Wiring: the stores, drivers and logger a process (a Lambda or the local runtime) gives its tasks.
import { createLogger, type CertGenerator, type Config, type Logger } from "@ottava/core";
import { DynamoHousekeepingStore, createClients, createStores, type Stores } from "@ottava/db";
import { certGenerator, type CaSource } from "./certs/local";
import { createDrivers, type LocalDataplane } from "@ottava/amphora";
import type { TaskContext } from "./tasks/context";

export function createHousekeepingStore(config: Config): DynamoHousekeepingStore {
  return new DynamoHousekeepingStore(createClients(config.dynamodbEndpoint).doc, config.tableName);
}

export interface TaskContextOptions {
  /**
   * The CA amphora certificates are signed with when the settings (OTTAVA_CA_CERTIFICATE and
   * OTTAVA_CA_PRIVATE_KEY, what task Lambdas use) name none: npm start's local CA, or a function that
   * answers it on first use (`() => loadOrCreateLocalCa(dataDir)`).
   */
  ca?: CaSource;
  /** npm start's local data plane (--dataplane haproxy): what the "local" compute, network and amphora drivers run on. */
  local?: LocalDataplane | undefined;
}

/** A task context that signs: its certificate generator is the settings' CA (else `opts.ca`; see certGenerator). */
export function createTaskContext(config: Config, stores: Stores = createStores(config), opts: TaskContextOptions = {}): TaskContext {
  const log = createLogger({ service: "ottava-controller" }, config.logLevel);
  const certs = certGenerator(config, log, opts.ca);
  // The REST amphora driver's client certificate is issued by the same CA, which the agents are checked against.
  const ca = opts.ca;
  const caCertificate = ca === undefined ? undefined : typeof ca === "function" ? async () => (await ca()).certificate : ca.certificate;
  return taskContextWith(config, stores, log, certs, { local: opts.local, ...(caCertificate ? { caCertificate } : {}) });
}

/**
 * A task context with the certificate generator given, or none: the task functions that sign nothing
 * (packages/controller/src/lambda.ts) build theirs without one, so their bundle carries no certificate
 * code; their REST amphora driver then needs OTTAVA_CLIENT_CERT (they are given no CA either).
 */
export function taskContextWith(
  config: Config,
  stores: Stores,
  log: Logger,
  certs: CertGenerator | undefined,
  opts: { local?: LocalDataplane | undefined; caCertificate?: string | (() => Promise<string>) } = {},
): TaskContext {
  return {
    store: stores.store,
    trail: stores.trail,
    changeSets: stores.changeSets,
    healthManagerConfig: stores.healthManagerConfig,
    drivers: createDrivers(config, { local: opts.local, log, ...(certs ? { certs } : {}), ...(opts.caCertificate ? { caCertificate: opts.caCertificate } : {}) }),
    config,
    log,
    ...(certs ? { certs } : {}),
    amphoraCerts: createHousekeepingStore(config),
  };
}

// Wiring: the stores, drivers, logger and metrics a process (a Lambda or the local runtime) gives its tasks.
import type { Config } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { createStores, type Stores } from "@ottava/db";
import { certGenerator, type CaSource } from "./certs/local";
import { taskContextWith, type TaskContextParts } from "./task-context";
import type { TaskContext } from "./tasks/context";

export interface TaskContextOptions extends TaskContextParts {
  /**
   * The CA amphora certificates are signed with when the settings (OTTAVA_CA_CERTIFICATE and
   * OTTAVA_CA_PRIVATE_KEY, what task Lambdas use) name none: npm start's local CA, or a function that
   * answers it on first use (`() => loadOrCreateLocalCa(dataDir)`).
   */
  ca?: CaSource;
}

/** A task context that signs: its certificate generator is the settings' CA (else `opts.ca`; see certGenerator). */
export function createTaskContext(config: Config, stores: Stores = createStores(config), opts: TaskContextOptions = {}): TaskContext {
  const log = createLogger({ service: "ottava-controller" }, config.logLevel);
  const certs = certGenerator(config, log, opts.ca);
  // The REST amphora driver's client certificate is issued by the same CA, which the agents are checked against.
  const { ca, ...parts } = opts;
  const caCertificate = ca === undefined ? undefined : typeof ca === "function" ? async () => (await ca()).certificate : ca.certificate;
  return taskContextWith(config, stores, log, certs, { ...parts, ...(caCertificate ? { caCertificate } : {}) });
}

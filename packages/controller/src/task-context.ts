// The task context without the certificate code: what the task functions that sign nothing (lambda.ts)
// build on. Nothing here imports certs/: a bundle from these entries carries
// no X.509 library, not even as a chunk it never loads. deps.ts adds the certificate generator.
import type { CertGenerator, Config, Logger } from "@ottava/core";
import { metrics } from "@ottava/edge";
import { createHousekeepingStore, type Stores } from "@ottava/db";
import { createDrivers, type LocalDataplane } from "@ottava/amphora";
import type { TaskContext } from "./tasks/context";

/**
 * A task context with the certificate generator given, or none (and the process's metrics): the task functions that sign nothing
 * build theirs without one; their REST amphora driver then needs OTTAVA_CLIENT_CERT (they are given no
 * CA either).
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
    drivers: createDrivers(config, {
      local: opts.local,
      log,
      ...(certs ? { certs } : {}),
      ...(opts.caCertificate ? { caCertificate: opts.caCertificate } : {}),
    }),
    config,
    log,
    metrics,
    ...(certs ? { certs } : {}),
    amphoraCerts: createHousekeepingStore(config),
  };
}

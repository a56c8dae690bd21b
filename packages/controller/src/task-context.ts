// The task context without the certificate code: what the task functions that sign nothing (lambda.ts)
// build on. Nothing here imports certs/: a bundle from these entries carries
// no X.509 library, not even as a chunk it never loads. deps.ts adds the certificate generator.
import type { CertGenerator, Config, Drivers, Logger, Notifier } from "@ottava/core";
import { classifyUnavailable, metrics } from "@ottava/edge";
import { createHousekeepingStore, type ClientDecorator, type Stores } from "@ottava/db";
import { createDrivers, type CreateDriversOptions, type LocalDataplane } from "@ottava/amphora";
import type { TaskContext } from "./tasks/context";

/** What a process may give its task context beyond the settings and the stores (TaskContextOptions, deps.ts). */
export interface TaskContextParts {
  /** npm start's local data plane (--dataplane haproxy): what the "local" compute, network and amphora drivers run on. */
  local?: LocalDataplane | undefined;
  /** The no-op drivers, where the settings pick them (else noopDrivers(): tests and npm start give them with injected faults or latency). */
  noop?: Drivers | undefined;
  /** Done to the task context's own DynamoDB client (amphoraCerts') before its first request: the API benchmark's meter. */
  decorateClient?: ClientDecorator | undefined;
  /** Done to each AWS client the drivers make, after classifyUnavailable: the EC2 benchmark's call counter. */
  decorateAwsClient?: CreateDriversOptions["decorateAwsClient"] | undefined;
  /** Where events go besides EventBridge (npm start's JSON lines in the data directory: @ottava/local's jsonLinesNotifier). */
  notifier?: Notifier | undefined;
}

/**
 * Where the tasks' events go (OTTAVA_EVENT_NOTIFICATIONS on): EventBridge when the settings name a bus or
 * an endpoint (the stacks set OTTAVA_EVENT_BUS_NAME; locally OTTAVA_EVENTBRIDGE_ENDPOINT), its client
 * loaded at the first event, and `local` (npm start's JSON lines); none when off.
 */
export function eventNotifier(config: Config, log: Logger, local?: Notifier): Notifier | undefined {
  if (!config.eventNotifications) return undefined;
  let loaded: Promise<Notifier> | undefined;
  const eventBridge: Notifier | undefined =
    config.eventBusName || config.eventbridgeEndpoint
      ? {
          notify: async (events) =>
            (await (loaded ??= import("@ottava/aws/events").then((m) => m.eventBridgeNotifier(config, log, metrics)))).notify(events),
        }
      : undefined;
  const sinks = [local, eventBridge].filter((n): n is Notifier => n !== undefined);
  if (sinks.length === 0) return undefined;
  return { notify: async (events) => void (await Promise.all(sinks.map((n) => n.notify(events)))) };
}

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
  opts: TaskContextParts & { caCertificate?: string | (() => Promise<string>) } = {},
): TaskContext {
  return {
    store: stores.store,
    trail: stores.trail,
    changeSets: stores.changeSets,
    healthManagerConfig: stores.healthManagerConfig,
    catalog: stores.catalog,
    drivers: createDrivers(config, {
      local: opts.local,
      noop: opts.noop,
      cloudIds: stores.cloudIds,
      log,
      decorateAwsClient: (client) => {
        classifyUnavailable(client);
        opts.decorateAwsClient?.(client);
      },
      ...(certs ? { certs } : {}),
      ...(opts.caCertificate ? { caCertificate: opts.caCertificate } : {}),
    }),
    config,
    log,
    metrics,
    ...(certs ? { certs } : {}),
    amphoraCerts: createHousekeepingStore(config, opts.decorateClient),
    notifier: eventNotifier(config, log, opts.notifier),
  };
}

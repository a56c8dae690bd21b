// What every task handler is given: the stores, the drivers, the settings, a logger and metrics, and
// what issues and records amphora certificates.
import {
  CertificateError,
  LockLost,
  PENDING_DELETE,
  Tree,
  type AmphoraCertStore,
  type CatalogStore,
  type CertGenerator,
  type ChangeSetStore,
  type Config,
  type FlowTrailStore,
  type HealthManagerConfigStore,
  type LoadBalancer,
  type LoadBalancerStore,
  type Logger,
  type Metrics,
  type Notifier,
  uuidOf,
} from "@ottava/core";
import type { Drivers } from "@ottava/core";

export interface TaskContext {
  store: LoadBalancerStore;
  /** Where the flows' final tasks record how they ended. */
  trail: FlowTrailStore;
  /** The change sets the API stored for a flow (cross-pool member updates). */
  changeSets: ChangeSetStore;
  /** The health-manager addresses the amphora agents are configured with, and each agent's generation. */
  healthManagerConfig: HealthManagerConfigStore;
  /** Flavors and availability zones: what an amphora is built with comes from their profiles. */
  catalog: Pick<CatalogStore, "getFlavor" | "getAvailabilityZone">;
  drivers: Drivers;
  config: Config;
  log: Logger;
  /** Where the flows' ends are counted (recordFlowEnd). */
  metrics: Metrics;
  /**
   * Issues amphora server certificates with the CA (Octavia's cert_generator). Absent in the task
   * functions that sign nothing (on AWS, every task but CA_TASKS): see certsOf.
   */
  certs?: CertGenerator;
  /** The amphora writes of a certificate rotation (outside the LB's lock). */
  amphoraCerts: AmphoraCertStore;
  /** Where the notifying tasks send their events (tasks/notifications.ts); none: no events are sent. */
  notifier?: Notifier | undefined;
}

/** The context's certificate generator; a task function that signs nothing has none (a deployment error). */
export function certsOf(ctx: TaskContext): CertGenerator {
  if (!ctx.certs) {
    throw new CertificateError(
      "this task function signs no certificates: the signing tasks (CA_TASKS) run packages/controller/src/lambda-signing.ts",
    );
  }
  return ctx.certs;
}

/** Every flow's input carries the LB and the lock owner: the execution's own name. */
export interface FlowInput {
  lbId: string;
  owner: string;
}

export type TaskHandler = (input: FlowInput & Record<string, unknown>, ctx: TaskContext) => Promise<unknown>;

/** A planned amphora: ids are derived from the execution and slot, so a retried task finds its own work. */
export interface PlannedAmphora {
  id: string;
  role: string | null;
  vrrp_priority: number | null;
}

/** uuidOf the parts joined with "/". */
export const deterministicId = (...parts: string[]): string => uuidOf(parts.join("/"));

/**
 * The LB's tree as its amphorae must now serve it: objects being deleted (PENDING_DELETE) are left
 * out, as Octavia's delete flows take them off the model before ListenersUpdate.
 */
export async function servedTree(ctx: TaskContext, lbId: string): Promise<Tree> {
  const { lb, items } = await ctx.store.tree(lbId);
  if (!lb) throw new LockLost(`load balancer ${lbId} is gone`);
  return new Tree(
    lb.record,
    items.filter((i) => i.record.provisioning_status !== PENDING_DELETE),
  );
}

export async function loadBalancer(ctx: TaskContext, lbId: string): Promise<LoadBalancer> {
  const lb = await ctx.store.getLoadBalancer(lbId);
  if (!lb) throw new LockLost(`load balancer ${lbId} is gone`);
  return lb.record;
}

/** Reverts and failure handlers of a flow that lost its lock have nothing left to write. */
export async function ignoreLockLost(ctx: TaskContext, what: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof LockLost)) throw e;
    ctx.log.warn("lock lost; nothing written", { what, reason: e.message });
  }
}

/**
 * Where a wait on the compute service stands (Octavia's ComputeRetry: amp_active_retries looks,
 * amp_active_wait_sec apart), kept by the flow between runs at the step's resultPath.
 */
export interface ActiveWait {
  waiting: boolean;
  attempts: number;
  retryIn: number;
}

/** Which look this run is, from the state the flow kept at `input[key]`. */
export const activeWaitAttempt = (input: Record<string, unknown>, key: string) =>
  ((input[key] as ActiveWait | undefined)?.attempts ?? 0) + 1;

/**
 * A run's answer: done, or wait amp_active_wait_sec and look again; a look that is not done at the
 * amp_active_retries-th throws what `giveUp` makes.
 */
export function activeWait(ctx: TaskContext, attempts: number, done: boolean, giveUp: () => Error): ActiveWait {
  if (done) return { waiting: false, attempts, retryIn: 0 };
  if (attempts >= ctx.config.ampActiveRetries) throw giveUp();
  return { waiting: true, attempts, retryIn: ctx.config.ampActiveWaitSec };
}

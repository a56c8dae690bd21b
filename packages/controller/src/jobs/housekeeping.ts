// Housekeeping's clocks (Octavia's octavia-housekeeping: db_cleanup every cleanup_interval, cert
// rotation every cert_interval; and Ottava's stuck-state repair and orphan sweep every
// cleanup_interval). `purge`, `repair`, `sweep` and `rotateCerts` are one pass each: `npm start` runs them on timers (Housekeeping), AWS
// on schedules (jobs/lambda.ts). All are safe when passes overlap (see core's services/housekeeping.ts
// and services/repair.ts: every write is conditional), so no lease is needed.
import {
  purgeDeleted,
  repairStuck,
  sweepOrphans,
  type OrphanSweeper,
  type SweepResult,
  type CatalogStore,
  type FlowTrailStore,
  type LoadBalancerStore,
  type RepairStore,
  rotateExpiringCerts,
  type Config,
  type HousekeepingDeps,
  type HousekeepingSettings,
  type Logger,
  type Metrics,
  type PurgeResult,
  type RotateResult,
  type WorkflowEngine,
} from "@ottava/core";
import { DynamoRepairStore, createClients, createHousekeepingStore, createStores, type ClientDecorator } from "@ottava/db";
import { asWorkload, classifyUnavailable } from "@ottava/edge";

export type HousekeepingJobDeps = HousekeepingDeps & {
  /** Where the repaired flows' ends are counted. */
  metrics: Metrics;
  store: LoadBalancerStore;
  trail: FlowTrailStore;
  catalog: CatalogStore;
  pending: RepairStore;
  /** What the settings' cloud drivers made, for the orphan sweep; none for drivers that make nothing (noop, local). */
  sweeper?: OrphanSweeper | undefined;
  config: Pick<
    Config,
    "loadBalancerExpiryAge" | "amphoraExpiryAge" | "certExpiryBuffer" | "cleanupInterval" | "certInterval" | "orphanGraceSec"
  >;
};

/** The jobs' stores, on their own clients (`decorate`d: the API benchmark's meter). */
export function createHousekeepingDeps(
  config: Config,
  engine: WorkflowEngine,
  log: Logger,
  metrics: Metrics,
  decorate?: ClientDecorator,
): HousekeepingJobDeps {
  const pending = new DynamoRepairStore(createClients(config.dynamodbEndpoint, decorate).doc, config.tableName);
  const { store, trail, catalog } = createStores(config, decorate);
  const sweeper = orphanSweeper(config, log);
  return { housekeeping: createHousekeepingStore(config, decorate), store, trail, catalog, pending, engine, log, metrics, config, sweeper };
}

/**
 * The orphan sweeper of OTTAVA_COMPUTE_DRIVER=ec2 or OTTAVA_NETWORK_DRIVER=vpc (@ottava/aws, loaded on the
 * first pass: the AWS SDK's EC2 client stays a chunk of the jobs' bundle that no other setting loads);
 * none for the other drivers.
 */
function orphanSweeper(config: Config, log: Logger): OrphanSweeper | undefined {
  if (config.computeDriver !== "ec2" && config.networkDriver !== "vpc") return undefined;
  let loaded: Promise<OrphanSweeper> | undefined;
  const load = () => (loaded ??= import("@ottava/aws/sweeper").then((aws) => aws.ec2OrphanSweeper(config, classifyUnavailable, log)));
  return {
    async *resources() {
      yield* (await load()).resources();
    },
    remove: async (r) => (await load()).remove(r),
  };
}

const settingsOf = (config: HousekeepingJobDeps["config"]): HousekeepingSettings => ({
  loadBalancerExpiryAge: config.loadBalancerExpiryAge,
  amphoraExpiryAge: config.amphoraExpiryAge,
  certExpiryBuffer: config.certExpiryBuffer,
});

/** DatabaseCleanup at `now`: load balancers and amphorae DELETED longer ago than their expiry age are purged. */
export async function purge(deps: HousekeepingJobDeps, now = new Date()): Promise<PurgeResult> {
  const result = await purgeDeleted(deps, settingsOf(deps.config), now);
  if (result.loadBalancers || result.amphorae) deps.log.info("housekeeping purge", { ...result });
  return result;
}

/** Stuck-state repair at `now`: LBs in PENDING_* whose execution no longer runs go to ERROR, the trail saying why. */
export async function repair(deps: HousekeepingJobDeps, now = new Date()) {
  return repairStuck(deps, now);
}

/** The orphan sweep: what the cloud drivers made for an owner that is gone is removed (core's services/sweep.ts). */
export async function sweep(deps: HousekeepingJobDeps): Promise<SweepResult> {
  // Its AWS calls name the job (its schedule's, stacks/jobs.ts) in their User-Agent, here and in npm start's one process.
  return asWorkload("SweepOrphans", () => sweepPass(deps));
}

async function sweepPass(deps: HousekeepingJobDeps): Promise<SweepResult> {
  if (!deps.sweeper) return { checked: 0, removed: [] };
  const result = await sweepOrphans({ store: deps.store, sweeper: deps.sweeper, log: deps.log, graceSec: deps.config.orphanGraceSec });
  if (result.removed.length) {
    deps.log.info("housekeeping orphan sweep", { checked: result.checked, removed: result.removed.length });
    deps.metrics.count("OrphansSwept", result.removed.length);
  }
  return result;
}

/** CertRotation at `now`: one amphora-cert-rotate flow per amphora whose certificate expires within cert_expiry_buffer. */
export async function rotateCerts(deps: HousekeepingJobDeps, now = new Date()): Promise<RotateResult> {
  return rotateExpiringCerts(deps, settingsOf(deps.config), now);
}

export interface HousekeepingOptions {
  /** Seconds between purges; default config.cleanupInterval. */
  cleanupInterval?: number;
  /** Seconds between rotation checks; default config.certInterval. */
  certInterval?: number;
  now?: () => Date;
}

/** Both jobs on timers, in process (npm start): each runs at start, then every interval, never overlapping itself. */
export class Housekeeping {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private readonly busy = new Set<string>();
  private readonly now: () => Date;
  private stopped = false;

  constructor(
    private readonly deps: HousekeepingJobDeps,
    private readonly opts: HousekeepingOptions = {},
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  start(): void {
    this.stopped = false;
    this.every("purge", this.opts.cleanupInterval ?? this.deps.config.cleanupInterval, () => purge(this.deps, this.now()));
    this.every("stuck-state repair", this.opts.cleanupInterval ?? this.deps.config.cleanupInterval, () => repair(this.deps, this.now()));
    if (this.deps.sweeper)
      this.every("orphan sweep", this.opts.cleanupInterval ?? this.deps.config.cleanupInterval, () => sweep(this.deps));
    this.every("certificate rotation", this.opts.certInterval ?? this.deps.config.certInterval, () => rotateCerts(this.deps, this.now()));
  }

  /** Stops the timers and waits for a pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    await Promise.allSettled([...this.running]);
  }

  private every(job: string, seconds: number, pass: () => Promise<unknown>): void {
    const run = () => {
      if (this.stopped || this.busy.has(job)) return; // a slow pass is never overlapped by the next
      this.busy.add(job);
      const p: Promise<unknown> = pass()
        .catch((e) => this.deps.log.error(`housekeeping ${job} failed`, { error: String(e) }))
        .finally(() => {
          this.busy.delete(job);
          this.running.delete(p);
        });
      this.running.add(p);
    };
    const timer = setInterval(run, seconds * 1000);
    timer.unref();
    this.timers.push(timer);
    run();
  }
}

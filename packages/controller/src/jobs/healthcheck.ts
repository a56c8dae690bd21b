// The health check's clock: every health_check_interval seconds, under a lease (one checker at a time
// wherever several receivers run), one pass of core's healthCheck. As Octavia's health manager, it
// does nothing until it has held the lease for heartbeat_timeout seconds: right after this process
// (or the receiver it runs in) started, or took over from another, every heartbeat looks old, and an
// outage of Ottava must never fail over the fleet.
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { healthCheck, type HealthCheckDeps, type HealthCheckResult, type HealthCheckSettings } from "@ottava/core";

export const HEALTH_CHECK_LEASE = "healthcheck";

export interface HealthCheckerOptions extends HealthCheckSettings {
  /** [health_manager] health_check_interval, seconds. */
  interval: number;
  now?: () => Date;
}

export class HealthChecker {
  readonly holder = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private holdingSince: number | undefined;
  private lastScan = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private readonly now: () => Date;

  constructor(
    private readonly deps: HealthCheckDeps,
    private readonly opts: HealthCheckerOptions,
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return; // a slow pass is never overlapped by the next
      this.running = this.tick()
        .catch((e) => this.deps.log.error("health check failed", { error: String(e) }))
        .finally(() => (this.running = undefined));
    }, this.opts.interval * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One tick: renew the lease, and check when it has been held long enough. Undefined when it did not check. */
  async tick(): Promise<HealthCheckResult | undefined> {
    const now = this.now();
    const held = await this.deps.checks.acquireLease(
      HEALTH_CHECK_LEASE,
      this.holder,
      now.getTime(),
      now.getTime() + 3 * this.opts.interval * 1000,
    );
    if (!held) {
      this.holdingSince = undefined;
      return undefined;
    }
    if (this.holdingSince === undefined) {
      this.holdingSince = now.getTime();
      this.deps.log.info("health check lease taken; waiting heartbeat_timeout before the first check", {
        holder: this.holder,
        seconds: this.opts.heartbeatTimeout,
      });
    }
    if (now.getTime() - this.holdingSince < this.opts.heartbeatTimeout * 1000) return undefined;
    // The scans by status read every amphora: once per heartbeat_timeout, not every interval.
    const scan = now.getTime() - this.lastScan >= this.opts.heartbeatTimeout * 1000;
    if (scan) this.lastScan = now.getTime();
    const result = await healthCheck(this.deps, this.opts, now, scan);
    if (result.stale || result.recovered.length) this.deps.log.info("health check", { ...result });
    if (result.failedOver.length) this.deps.metrics.count("AmphoraFailovers", result.failedOver.length);
    if (result.stopped.length) this.deps.metrics.count("FailoverStormStops", result.stopped.length);
    return result;
  }
}

// The local data plane behind `npm start -- --dataplane haproxy`: the local compute, network and amphora drivers over this machine's amphorae (Octavia's amphora provider with Nova, Neutron and amphora VMs, on one machine), and their life with Ottava's: restored at start, stopped at stop.
import { existsSync } from "node:fs";
import { readFile, unlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ACTIVE,
  AMPHORA_ALLOCATED,
  DELETED,
  PENDING_DELETE,
  Tree,
  type AmphoraDriver,
  type CertManager,
  type Config,
  type LoadBalancer,
  type HealthManagerConfigStore,
  type LoadBalancerStore,
  type Logger,
} from "@ottava/core";
import { LocalAmphoraDriver } from "./amphora";
import { LocalComputeDriver } from "./compute";
import { AmphoraHost } from "./host";
import type { HeartbeatTarget } from "./heartbeat";
import { AddressRange, LocalNetworkDriver, type VipAllocations } from "./network";
import { haproxyVersion } from "./process";

export interface LocalDataplaneOptions {
  config: Pick<
    Config,
    "computeDriver" | "amphoraDriver" | "networkDriver" | "haproxyBinary" | "localVipRange" | "heartbeatInterval" | "controllerIpPortList"
  >;
  /** The amphorae live in <dataDir>/amphorae. */
  dataDir: string;
  store: LoadBalancerStore;
  /** The health-manager addresses admins set: what the local amphorae's agents are configured with. */
  healthManagerConfig: HealthManagerConfigStore;
  /** Where the network driver records its addresses (packages/db's DynamoVipStore). */
  vips: VipAllocations;
  /** The heartbeat key and the local receiver's address (once it listens); without it amphorae send no heartbeats. */
  heartbeat?: { key: string; localReceiver: () => HeartbeatTarget | undefined } | undefined;
  log: Logger;
}

/**
 * Claims the VIP range for this process on this machine (a pid file in /tmp): two stacks handing out
 * the same addresses would have their HAProxy processes share the same VIP ports. A claim whose
 * process is gone is taken over. Answers the release.
 */
async function claimRange(range: AddressRange): Promise<() => Promise<void>> {
  const file = join(existsSync("/tmp") ? "/tmp" : tmpdir(), `ottava-vip-range-${range.cidr.replace(/[./]/g, "_")}.pid`);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: "wx" });
      return async () => {
        if ((await readFile(file, "utf8").catch(() => "")).trim() === String(process.pid)) await unlink(file).catch(() => undefined);
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const pid = Number((await readFile(file, "utf8").catch(() => "")).trim());
    let alive = false;
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
      try {
        process.kill(pid, 0);
        alive = true;
      } catch (e) {
        alive = (e as NodeJS.ErrnoException).code === "EPERM";
      }
    }
    if (alive) {
      throw new Error(
        `another Ottava (pid ${pid}) hands out the local VIP range ${range.cidr}: give this one another range (OTTAVA_LOCAL_VIP_RANGE, e.g. 127.0.101.0/24)`,
      );
    }
    await unlink(file).catch(() => undefined);
  }
  throw new Error(`could not claim the local VIP range ${range.cidr} (${file})`);
}

/** Can this machine bind `address`? (macOS routes only 127.0.0.1 to lo0 unless aliases are added.) */
function canBind(address: string): Promise<string | undefined> {
  return new Promise((ok) => {
    const s = createServer();
    s.once("error", (e: NodeJS.ErrnoException) => ok(e.code ?? e.message));
    s.listen(0, address, () => s.close(() => ok(undefined)));
  });
}

export class LocalDataplane {
  private constructor(
    private readonly opts: LocalDataplaneOptions,
    readonly range: AddressRange,
    /** The amphorae of this machine; undefined when neither the compute nor the amphora driver is local. */
    readonly host: AmphoraHost | undefined,
    readonly network: LocalNetworkDriver,
    private readonly releaseRange: () => Promise<void>,
  ) {}

  /**
   * Checks what the local drivers need, with messages saying how to get it: HAProxy (when the compute
   * or amphora driver is local), and a VIP range this machine can bind (when the network driver is).
   * Answers HAProxy's version.
   */
  static async preflight(config: LocalDataplaneOptions["config"]): Promise<string | undefined> {
    const range = new AddressRange(config.localVipRange);
    const failed = config.networkDriver === "local" ? await canBind(range.firstAddress) : undefined;
    if (failed) {
      throw new Error(
        `the local VIP range ${range.cidr} (OTTAVA_LOCAL_VIP_RANGE) cannot be used: binding ${range.firstAddress} failed (${failed}). ` +
          "Linux binds all of 127.0.0.0/8; on macOS add the addresses first (sudo ifconfig lo0 alias <address> up) or choose a range you have",
      );
    }
    return config.computeDriver === "local" || config.amphoraDriver === "local" ? haproxyVersion(config.haproxyBinary) : undefined;
  }

  /** Checks (preflight), stops HAProxy processes a previous run left behind, and answers the data plane. */
  static async open(opts: LocalDataplaneOptions): Promise<LocalDataplane> {
    const { config } = opts;
    await LocalDataplane.preflight(config);
    const range = new AddressRange(config.localVipRange);
    const releaseRange = config.networkDriver === "local" ? await claimRange(range) : async () => {};
    try {
      let host: AmphoraHost | undefined;
      if (config.computeDriver === "local" || config.amphoraDriver === "local") {
        host = await AmphoraHost.open({
          root: join(opts.dataDir, "amphorae"),
          haproxyBinary: config.haproxyBinary,
          log: opts.log,
          heartbeat: opts.heartbeat && { ...opts.heartbeat, intervalSeconds: config.heartbeatInterval },
        });
        const stale = await host.stopStale();
        if (stale) opts.log.warn("stopped HAProxy processes a previous run left running", { count: stale });
      }
      return new LocalDataplane(opts, range, host, new LocalNetworkDriver(range, opts.vips), releaseRange);
    } catch (e) {
      await releaseRange();
      throw e;
    }
  }

  private computeDriver: LocalComputeDriver | undefined;

  get compute(): LocalComputeDriver {
    return (this.computeDriver ??= new LocalComputeDriver(this.requireHost("COMPUTE_DRIVER")));
  }

  /** The local amphora driver, reading certificates through `certificates` (the configured certificate manager). */
  amphoraDriver(certificates: CertManager): LocalAmphoraDriver {
    return new LocalAmphoraDriver({
      host: this.requireHost("AMPHORA_DRIVER"),
      store: this.opts.store,
      certificates,
      // currentHealthManagerConfig's list: the table's, else the setting's.
      controllers: async () =>
        (await this.opts.healthManagerConfig.getHealthManagerConfig())?.controller_ip_port_list ?? this.opts.config.controllerIpPortList,
      range: this.range,
      secret: this.opts.heartbeat?.key,
      log: this.opts.log,
    });
  }

  /**
   * Brings back what a previous run served: every ACTIVE load balancer's configuration is rendered
   * again and its MASTER or STANDALONE amphora's HAProxy started (through `amphora`, the amphora
   * driver). Amphora directories whose amphora is gone (DELETED, or not in the table) are removed.
   * A load balancer that cannot be served is logged; the others still are.
   */
  async restore(amphora: AmphoraDriver): Promise<{ restored: number; failed: number; removed: number }> {
    const host = this.host;
    let restored = 0;
    let failed = 0;
    let removed = 0;
    if (!host) return { restored, failed, removed };
    const { store, log } = this.opts;
    const live = new Set<string>();
    for await (const item of store.loadBalancers(undefined)("asc", undefined)) {
      const lb = item as unknown as LoadBalancer;
      const { lb: current, items } = await store.tree(lb.id);
      if (!current) continue;
      const amphorae = (await store.amphoraeOf(lb.id)).filter((a) => a.status !== DELETED);
      for (const a of amphorae) live.add(a.id);
      if (current.record.provisioning_status !== ACTIVE) continue;
      const allocated = amphorae.filter((a) => a.status === AMPHORA_ALLOCATED);
      if (allocated.length === 0) continue;
      try {
        await amphora.update(
          new Tree(
            current.record,
            items.filter((i) => i.record.provisioning_status !== PENDING_DELETE),
          ),
          allocated,
        );
        restored++;
      } catch (e) {
        failed++;
        log.error("load balancer not restored", { lbId: lb.id, error: e instanceof Error ? e.message : String(e) });
      }
    }
    for (const id of await host.list()) {
      if (live.has(id)) continue;
      const record = await store.getAmphora(id);
      if (record && record.status !== DELETED) continue;
      await host.destroy(id);
      removed++;
    }
    return { restored, failed, removed };
  }

  /** Stops every amphora's HAProxy and heartbeats (their files stay for the next start). */
  async stop(): Promise<void> {
    await this.host?.stopAll();
    await this.releaseRange();
  }

  private requireHost(setting: string): AmphoraHost {
    if (!this.host) throw new Error(`OTTAVA_${setting}=local needs the local amphorae, which this data plane was not opened with`);
    return this.host;
  }
}

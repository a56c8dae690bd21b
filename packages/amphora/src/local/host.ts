// The amphorae of this machine, what Nova and the amphora image are to Octavia's amphora provider: one directory per amphora laid out as the amphora agent's base_path (octavia/amphorae/backends/agent/api_server/loadbalancer.py, util.py), and the HAProxy and heartbeat sender of each amphora that serves.
//
// <root>/<amphora id>/            the amphora's base_path ([haproxy_amphora] base_path, /var/lib/octavia)
//   amphora.json                  what the compute driver knows of it (id, created_at)
//   server.pem                    the agent's certificate and key (0600; Octavia's /etc/octavia/certs/server.pem)
//   amphora-agent.conf            the agent's configuration (0600: it holds the heartbeat key)
//   haproxy-default-user-group.conf   the group HAProxy's workers run as (root only), as the agent writes it
//   <lb id>/haproxy.cfg           the rendered configuration; <lb id>/<lb id>.pid, <lb id>/servers-state
//   <lb id>.sock                  HAProxy's stats socket (what the heartbeat sender reads)
//   certs/<lb id>/                the certificates the configuration names ([haproxy_amphora] base_cert_dir)
//   vrrp/octavia-keepalived.conf  keepalived's configuration (ACTIVE_STANDBY; written, not run)
//   lvs/octavia-keepalivedlvs-<listener id>.conf   UDP and SCTP listeners (written, not run: no IPVS here)
//   haproxy.log                   HAProxy's stderr: its own messages and, with connection logging, one line per connection
//   stats_counters.json           the heartbeat sender's counters
//
// A Unix socket path is at most 104 bytes on some systems: when <root> is too long for
// <amphora dir>/<lb id>.sock, the paths HAProxy is given go through a short alias,
// /tmp/ottava-<hash> → <amphora dir>.
//
// One file, long as it is: one class whose every operation on an amphora goes through the same per-amphora
// instance and queue (run()), so the directory, HAProxy and heartbeat handling cannot be pulled apart
// without spreading that serialisation over several files.
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { appendFile, mkdir, readdir, readFile, rename, rm, stat, symlink, readlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DriverError, type Logger } from "@ottava/core";
import { haproxyQuery } from "./haproxy-query";
import { startHeartbeats, type HeartbeatSender, type HeartbeatTarget } from "./heartbeat";
import { checkConfig, checkNewBinds, haproxyVersion, HaproxyProcess, killStale } from "./process";

/** Longest socket path HAProxy and Node may bind or connect to everywhere (macOS's sun_path is 104 bytes). */
const MAX_SOCKET_PATH = 100;
/** HAProxy's file descriptors per connection of global maxconn (2 sockets, plus splice pipes: 2 per 4 connections), and those it keeps aside. */
const FDS_PER_CONN = 2.5;
const FDS_RESERVED = 1000;
/** haproxy.log is moved aside to haproxy.log.1 past this size. */
const LOG_ROTATE_BYTES = 16 * 1024 * 1024;

export interface HeartbeatSettings {
  /** [health_manager] heartbeat_key. Secret: never logged. */
  key: string;
  /** [health_manager] heartbeat_interval, seconds. */
  intervalSeconds: number;
  /** Where heartbeats go when the agent's controller_ip_port_list is empty: the local receiver, once it listens. */
  localReceiver: () => HeartbeatTarget | undefined;
}

export interface AmphoraHostOptions {
  /** Where the amphorae live: <data dir>/amphorae. */
  root: string;
  haproxyBinary: string;
  log: Logger;
  /** Without it, no heartbeats are sent. */
  heartbeat?: HeartbeatSettings | undefined;
}

/** What an amphora's HAProxy runs for one load balancer: its configuration and the certificate files it names. */
export interface HaproxyPayload {
  lbId: string;
  /** haproxy.cfg as rendered. */
  config: string;
  /** File name under <base_cert_dir>/<lb id>/ → content (certificates and keys: secret, written 0600). */
  certs: Readonly<Record<string, string>>;
  /** `-L`: the amphora's peer name (ACTIVE_STANDBY's peers section). */
  localPeer: string;
}

/** Where an amphora's files are, as HAProxy is told (through the short alias when needed) and as they are on disk. */
export interface AmphoraPaths {
  /** The amphora's directory. */
  dir: string;
  /** base_path as HAProxy is given it: `dir`, or its short alias. */
  basePath: string;
  /** base_cert_dir: <basePath>/certs. */
  certDir: string;
}

/** One amphora's processes. Operations on an amphora run one after the other (`queue`). */
interface Instance {
  haproxy?: HaproxyProcess | undefined;
  /** The load balancer its HAProxy serves. */
  lbId?: string | undefined;
  heartbeats?: HeartbeatSender | undefined;
  /** The agent's controller_ip_port_list, as last pushed (updateAgentConfig). */
  controllers: HeartbeatTarget[];
  queue: Promise<unknown>;
  /** haproxy.log: its size, the appends under way, and whether it still takes lines. */
  log?: { file: string; bytes: number; writing: Promise<unknown>; closed: boolean };
}

/** "ip:port" or "[ipv6]:port" as a heartbeat target. */
export function parseControllerAddress(entry: string): HeartbeatTarget {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(entry) ?? /^([^:]+):(\d+)$/.exec(entry);
  if (!m) throw new Error(`'${entry}' is not ip:port`);
  return { host: m[1]!, port: Number(m[2]) };
}

/** The hard limit on open files, or undefined when there is none (ulimit -Hn). */
function hardFileLimit(): Promise<number | undefined> {
  return new Promise((ok) =>
    execFile("/bin/sh", ["-c", "ulimit -Hn"], (e, out) => {
      const n = Number(String(out).trim());
      ok(e || !Number.isFinite(n) || n <= 0 ? undefined : n);
    }),
  );
}

/** The group the amphora agent has HAProxy's workers run as (haproxy-default-user-group.conf): nogroup where there is one. */
let userGroup: string | undefined;
function userGroupConfig(): string {
  if (userGroup === undefined) {
    let groups = "";
    try {
      groups = readFileSync("/etc/group", "utf8");
    } catch {
      /* none: the fallback */
    }
    userGroup = `global\n    group ${/^nogroup:/m.test(groups) ? "nogroup" : "nobody"}\n`;
  }
  return userGroup;
}

export class AmphoraHost {
  private readonly instances = new Map<string, Instance>();
  private readonly aliases = new Set<string>();
  private readonly isRoot = process.getuid?.() === 0;

  private constructor(
    private readonly opts: AmphoraHostOptions,
    /** What `haproxy -v` reports ("2.6.12-1+deb12u4"): the renderer's haproxy_version. */
    readonly haproxyVersion: string,
    /** The largest global maxconn the file-descriptor limit allows, if it bounds it. */
    private readonly maxconnLimit: number | undefined,
  ) {}

  /** Checks the HAProxy binary (a clear message without one) and the machine's limits; creates the root. */
  static async open(opts: AmphoraHostOptions): Promise<AmphoraHost> {
    const version = await haproxyVersion(opts.haproxyBinary);
    const files = await hardFileLimit();
    const limit = files === undefined ? undefined : Math.max(100, Math.floor((files - FDS_RESERVED) / FDS_PER_CONN));
    await mkdir(opts.root, { recursive: true, mode: 0o700 });
    return new AmphoraHost(opts, version, limit);
  }

  dirOf(amphoraId: string): string {
    if (!/^[A-Za-z0-9-]+$/.test(amphoraId)) throw new Error(`'${amphoraId}' is not an amphora id`);
    return join(this.opts.root, amphoraId);
  }

  exists(amphoraId: string): boolean {
    return existsSync(join(this.dirOf(amphoraId), "amphora.json"));
  }

  /** The amphorae on disk. */
  async list(): Promise<string[]> {
    const names = await readdir(this.opts.root).catch(() => [] as string[]);
    return names.filter((n) => existsSync(join(this.opts.root, n, "amphora.json")));
  }

  /** The paths HAProxy is given for this amphora; creates the short alias when the socket path would be too long. */
  async paths(amphoraId: string): Promise<AmphoraPaths> {
    const dir = this.dirOf(amphoraId);
    let basePath = dir;
    // The stats socket is <base_path>/<lb id>.sock: a UUID's length, as the amphora's id.
    if (Buffer.byteLength(join(dir, `${amphoraId}.sock`)) > MAX_SOCKET_PATH) {
      basePath = join(existsSync("/tmp") ? "/tmp" : "/var/tmp", `ottava-${createHash("sha256").update(dir).digest("hex").slice(0, 16)}`);
      const current = await readlink(basePath).catch(() => undefined);
      if (current !== dir) {
        await unlink(basePath).catch(() => undefined);
        await symlink(dir, basePath);
      }
      this.aliases.add(basePath);
    }
    return { dir, basePath, certDir: join(basePath, "certs") };
  }

  /** A new amphora: its directory and the agent's certificate (Octavia: the instance and its config drive). */
  create(amphoraId: string, serverPem: string): Promise<void> {
    return this.run(amphoraId, () => this.createDir(amphoraId, serverPem));
  }

  /** Replaces the agent's certificate (upload_cert_amp). */
  putServerPem(amphoraId: string, pem: string): Promise<void> {
    return this.run(amphoraId, () => this.writeOwn(amphoraId, "server.pem", pem, true));
  }

  /** Writes a file of the amphora's (agent configuration, keepalived, LVS), `secret` ones readable by their owner only. */
  putFile(amphoraId: string, relative: string, content: string, secret = false): Promise<void> {
    return this.run(amphoraId, () => this.writeOwn(amphoraId, relative, content, secret));
  }

  /** A file of the amphora's, if it has it. */
  async getFile(amphoraId: string, relative: string): Promise<string | undefined> {
    return readFile(join(this.dirOf(amphoraId), relative), "utf8").catch(() => undefined);
  }

  /** Makes the amphora's folder `folder` hold exactly `files` (paths relative to the amphora's directory, under `folder`). */
  syncFiles(amphoraId: string, folder: string, files: Readonly<Record<string, string>>): Promise<void> {
    return this.run(amphoraId, async () => {
      const dir = join(this.dirOf(amphoraId), folder);
      const wanted = new Set(Object.keys(files).map((f) => join(this.dirOf(amphoraId), f)));
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!wanted.has(join(dir, name))) await rm(join(dir, name), { recursive: true, force: true });
      }
      for (const [relative, content] of Object.entries(files)) await this.writeOwn(amphoraId, relative, content, false);
    });
  }

  /**
   * Serves `payload` on this amphora: writes its certificates and configuration, checks it
   * (`haproxy -c`), then starts HAProxy or reloads it. On failure (a DriverError with HAProxy's
   * reason) the previous configuration is put back, and a running HAProxy goes on serving it.
   */
  serve(amphoraId: string, payload: HaproxyPayload): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      const { dir } = await this.paths(amphoraId);
      const lbDir = join(dir, payload.lbId);
      const args = this.argsFor(payload);
      const { configs, previous } = await this.install(amphoraId, payload, args);
      try {
        if (inst.haproxy?.running && inst.lbId === payload.lbId && sameArgs(inst.haproxy.args, args)) {
          await checkNewBinds(payload.config, previous);
          await this.saveServerState(amphoraId, payload.lbId);
          await inst.haproxy.reload();
        } else {
          await inst.haproxy?.stop();
          const haproxy = new HaproxyProcess(
            this.opts.haproxyBinary,
            { configs, pidFile: join(lbDir, `${payload.lbId}.pid`), cwd: dir },
            this.opts.log,
            amphoraId,
            args,
          );
          inst.haproxy = haproxy;
          inst.lbId = payload.lbId;
          this.pipeLog(amphoraId, inst, haproxy);
          await haproxy.start();
        }
      } catch (e) {
        if (previous === undefined) await rm(configs[0]!, { force: true });
        else await writeFile(configs[0]!, previous, { mode: 0o600 });
        throw e;
      }
    });
  }

  /** Writes `payload` without serving it (an ACTIVE_STANDBY BACKUP): a HAProxy running here stops. */
  standby(amphoraId: string, payload: HaproxyPayload): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      await this.install(amphoraId, payload, this.argsFor(payload));
      await inst.haproxy?.stop();
      inst.haproxy = undefined;
    });
  }

  /** No listener left for HAProxy (Octavia's delete_listener): it stops, its configuration and certificates go. */
  unserve(amphoraId: string, lbId: string): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      await inst.haproxy?.stop();
      inst.haproxy = undefined;
      await rm(join(this.dirOf(amphoraId), lbId, "haproxy.cfg"), { force: true });
      await rm(join(this.dirOf(amphoraId), "certs", lbId), { recursive: true, force: true });
    });
  }

  /** Does this amphora send heartbeats? */
  heartbeating(amphoraId: string): boolean {
    return this.instances.get(amphoraId)?.heartbeats !== undefined;
  }

  /**
   * The amphora's heartbeats (as its health daemon, started with the agent): sent every interval to
   * the agent's controllers, or the local receiver when it has none, reporting `lbId`'s HAProxy.
   * An amphora that does not serve (a BACKUP) sends none: its listeners would count as down.
   */
  startHeartbeats(amphoraId: string, lbId: string): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      const hb = this.opts.heartbeat;
      if (!hb) return;
      const { basePath, dir } = await this.paths(amphoraId);
      const statsSocket = join(basePath, `${lbId}.sock`);
      const pidFile = join(dir, lbId, `${lbId}.pid`);
      if (inst.heartbeats) {
        inst.heartbeats.update({ statsSocket, pidFile });
        return;
      }
      inst.heartbeats = startHeartbeats({
        amphoraId,
        statsSocket,
        pidFile,
        targets: this.targetsOf(inst),
        key: hb.key,
        intervalSeconds: hb.intervalSeconds,
        countersFile: join(dir, "stats_counters.json"),
        log: this.opts.log,
      });
    });
  }

  /** updateAgentConfig: the controllers heartbeats go to from now on (none: the local receiver). */
  setControllers(amphoraId: string, controllerIpPortList: readonly string[]): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      inst.controllers = controllerIpPortList.map(parseControllerAddress);
      inst.heartbeats?.update({ targets: this.targetsOf(inst) });
    });
  }

  /** Stops the heartbeats of an amphora (a BACKUP, or one going away). */
  stopHeartbeats(amphoraId: string): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      await inst.heartbeats?.stop();
      inst.heartbeats = undefined;
    });
  }

  /** Deletes the amphora (compute delete): its HAProxy (soft stop, then hard) and heartbeats stop, its directory goes. */
  destroy(amphoraId: string): Promise<void> {
    return this.run(amphoraId, async (inst) => {
      await inst.heartbeats?.stop();
      await inst.haproxy?.stop();
      if (inst.log) {
        inst.log.closed = true;
        await inst.log.writing;
      }
      this.instances.delete(amphoraId);
      const { basePath, dir } = await this.paths(amphoraId);
      if (basePath !== dir) {
        await unlink(basePath).catch(() => undefined);
        this.aliases.delete(basePath);
      }
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    });
  }

  /** Stops the HAProxy masters a previous run left running (it died without stopping them). */
  async stopStale(): Promise<number> {
    let stopped = 0;
    for (const id of await this.list()) {
      const dir = this.dirOf(id);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const pidFile = join(dir, name, `${name}.pid`);
        if (existsSync(pidFile) && (await killStale(pidFile, join(dir, name, "haproxy.cfg")))) stopped++;
      }
    }
    return stopped;
  }

  /** Stops every amphora's HAProxy and heartbeats (Ottava stops); their files stay for the next start. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.instances.keys()].map((id) =>
        this.run(id, async (inst) => {
          await inst.heartbeats?.stop();
          await inst.haproxy?.stop();
          inst.heartbeats = undefined;
          inst.haproxy = undefined;
        }),
      ),
    );
    for (const alias of this.aliases) await unlink(alias).catch(() => undefined);
    this.aliases.clear();
  }

  // ---- inside -------------------------------------------------------------------------------------

  private instance(amphoraId: string): Instance {
    let inst = this.instances.get(amphoraId);
    if (!inst) {
      inst = { controllers: [], queue: Promise.resolve() };
      this.instances.set(amphoraId, inst);
    }
    return inst;
  }

  /**
   * Runs `fn` after the amphora's operations under way. Its failures are DriverErrors (what a cloud's
   * failures are to the flows, which retry them): a file that cannot be written is one.
   */
  private run<T>(amphoraId: string, fn: (inst: Instance) => Promise<T>): Promise<T> {
    const inst = this.instance(amphoraId);
    const result = inst.queue.then(() =>
      fn(inst).catch((e: unknown) => {
        throw e instanceof DriverError ? e : new DriverError(`Local amphora ${amphoraId}: ${e instanceof Error ? e.message : String(e)}`);
      }),
    );
    inst.queue = result.catch(() => undefined);
    return result;
  }

  private async createDir(amphoraId: string, serverPem: string): Promise<void> {
    const dir = this.dirOf(amphoraId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (serverPem) await writeFile(join(dir, "server.pem"), serverPem, { mode: 0o600 });
    if (!existsSync(join(dir, "amphora.json"))) {
      await writeFile(join(dir, "amphora.json"), `${JSON.stringify({ id: amphoraId, created_at: new Date().toISOString() })}\n`);
    }
  }

  /** An amphora the local compute driver did not build (another compute driver) gets its directory on first use. */
  private async ensure(amphoraId: string): Promise<void> {
    if (!this.exists(amphoraId)) await this.createDir(amphoraId, "");
  }

  private async writeOwn(amphoraId: string, relative: string, content: string, secret: boolean): Promise<void> {
    const file = join(this.dirOf(amphoraId), relative);
    await this.ensure(amphoraId);
    await mkdir(join(file, ".."), { recursive: true, mode: 0o700 });
    await writeFile(file, content, { mode: secret ? 0o600 : 0o644 });
  }

  private targetsOf(inst: Instance): HeartbeatTarget[] {
    if (inst.controllers.length) return inst.controllers;
    const local = this.opts.heartbeat?.localReceiver();
    return local ? [local] : [];
  }

  /**
   * Local adaptations of the rendered configuration: HAProxy's workers run as `nobody` only when
   * Ottava runs as root (as the agent does); another user cannot change its uid, so the line goes.
   */
  private adapt(config: string): string {
    return this.isRoot ? config : config.replace(/^ {4}user nobody\n/m, "");
  }

  /** -L, and -n when the rendered global maxconn needs more file descriptors than this machine allows. */
  private argsFor(payload: HaproxyPayload): string[] {
    const args = ["-L", payload.localPeer];
    const m = /^global\n(?: {4}.*\n)*? {4}maxconn (\d+)$/m.exec(payload.config);
    if (this.maxconnLimit !== undefined && m && Number(m[1]) > this.maxconnLimit) args.push("-n", String(this.maxconnLimit));
    return args;
  }

  /**
   * Writes the payload's certificates and configuration, the configuration only once `haproxy -c`
   * accepts it (the previous one stays otherwise). Answers the -f files (haproxy.cfg, and as root the
   * agent's user-group file) and the configuration it replaced.
   */
  private async install(
    amphoraId: string,
    payload: HaproxyPayload,
    args: readonly string[],
  ): Promise<{ configs: string[]; previous: string | undefined }> {
    await this.ensure(amphoraId);
    const dir = this.dirOf(amphoraId);
    const lbDir = join(dir, payload.lbId);
    await mkdir(lbDir, { recursive: true, mode: 0o700 });
    await this.writeCerts(amphoraId, payload);
    const state = join(lbDir, "servers-state");
    if (!existsSync(state)) await writeFile(state, "");
    const config = join(lbDir, "haproxy.cfg");
    const extra: string[] = [];
    if (this.isRoot) {
      const userGroup = join(dir, "haproxy-default-user-group.conf");
      await writeFile(userGroup, userGroupConfig());
      extra.push(userGroup);
    }
    const previous = await readFile(config, "utf8").catch(() => undefined);
    const fresh = `${config}.new`;
    await writeFile(fresh, this.adapt(payload.config), { mode: 0o600 });
    try {
      await checkConfig(this.opts.haproxyBinary, [fresh, ...extra], args);
    } catch (e) {
      await rm(fresh, { force: true });
      throw e;
    }
    await rename(fresh, config);
    return { configs: [config, ...extra], previous };
  }

  /** certs/<lb id>/: exactly the payload's files (0600), others removed. */
  private async writeCerts(amphoraId: string, payload: HaproxyPayload): Promise<void> {
    const certDir = join(this.dirOf(amphoraId), "certs", payload.lbId);
    await mkdir(certDir, { recursive: true, mode: 0o700 });
    for (const name of await readdir(certDir)) if (!Object.hasOwn(payload.certs, name)) await rm(join(certDir, name), { force: true });
    for (const [name, content] of Object.entries(payload.certs)) {
      if (!/^[A-Za-z0-9._:-]+$/.test(name) || name.startsWith(".")) throw new Error(`'${name}' is not a certificate file name`);
      await writeFile(join(certDir, name), content, { mode: 0o600 });
    }
  }

  /** As the agent's reload: the servers' state saved first (`show servers state`), so health states survive the reload. */
  private async saveServerState(amphoraId: string, lbId: string): Promise<void> {
    const { basePath, dir } = await this.paths(amphoraId);
    try {
      const state = await haproxyQuery(join(basePath, `${lbId}.sock`), "show servers state", 3000);
      await writeFile(join(dir, lbId, "servers-state"), `${state}\n`);
    } catch (e) {
      this.opts.log.debug("servers state not saved", { amphora: amphoraId, error: String(e) });
    }
  }

  /** HAProxy's stderr appended to <amphora dir>/haproxy.log (moved to haproxy.log.1 past LOG_ROTATE_BYTES). */
  private pipeLog(amphoraId: string, inst: Instance, haproxy: HaproxyProcess): void {
    const file = join(this.dirOf(amphoraId), "haproxy.log");
    inst.log ??= { file, bytes: 0, writing: Promise.resolve(), closed: false };
    const log = inst.log;
    void stat(file).then(
      (s) => (log.bytes = s.size),
      () => undefined,
    );
    haproxy.onLine((line) => {
      if (log.closed) return;
      log.writing = log.writing.then(async () => {
        if (log.bytes > LOG_ROTATE_BYTES) {
          await rename(file, `${file}.1`).catch(() => undefined);
          log.bytes = 0;
        }
        const text = `${line}\n`;
        log.bytes += Buffer.byteLength(text);
        await appendFile(file, text).catch(() => undefined);
      });
    });
  }
}

const sameArgs = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

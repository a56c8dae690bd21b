// A real, offline OpenStack Keystone (Debian's python3-keystone 22, "Zed") for tests: sqlite + fernet
// tokens in a temporary directory, Keystone's public WSGI app served by ONE single-threaded uwsgi process
// on 127.0.0.1 (see serve() and StartKeystoneOptions.threads for why).
//
//   const ks = await startKeystone();
//   const project = await ks.createProject("p1");
//   const user = await ks.createUser("alice", "secret", project);
//   await ks.assignRole(user, project, "load-balancer_member");
//   const { token } = await ks.issueToken("alice", "secret", "p1");
//   ...
//   await ks.stop();
//
// Needs: apt-get install --no-install-recommends python3-keystone uwsgi-core uwsgi-plugin-python3
// (.ci/run installs them). Only Debian's /usr/bin/python3 has the OpenStack packages; a pyenv `python3`
// on PATH does not, so everything here uses absolute paths and strips PYTHON* variables.
//
// Start-up cost: `keystone-manage` takes 3-4 s per call just to import Keystone, so db_sync, fernet_setup,
// credential_setup and bootstrap run once per machine into a template directory under os.tmpdir()
// (keyed by the installed Keystone and TEMPLATE_FORMAT; prepareKeystoneTemplate() builds it ahead, e.g.
// from a vitest globalSetup) that every instance copies; the identity endpoints that bootstrap
// registered are then rewritten in the copy for the instance's port. Pass `{ template: false }` to run
// every keystone-manage step in the instance's own directory instead. Then uwsgi needs ~3.5 s to load
// Keystone (more when the machine is busy).
//
// Traps met (kept here so they are not met again): several uwsgi threads or processes on sqlite ("database
// is locked", "SQLite objects created in a thread can only be used in that same thread"); sqlite's
// rollback journal (WAL needed, see provision()); uwsgi's --http-socket closing connections that Node's
// fetch wants to reuse ("SocketError: other side closed", see serve()); expires_at without a zone for
// application-credential tokens (see tokenExpiry()); bcrypt's default cost (see keystoneConf()).
//
// Expired tokens: Keystone has no API to ask for a token with a given lifetime, but since the fix for
// CVE-2022-2447 (keystone/token/provider.py issue_token) a token issued with an application credential
// never outlives that credential's `expires_at`. issueShortLivedToken() uses that: the token's own
// `expires_at` is the credential's, and once it passes, validation answers 404 like any expired token.
// expiredToken() does the same and waits until Keystone really rejects it.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { basename, join } from "node:path";
import { freePort } from "@ottava/amphora/free-port";

const PYTHON = "/usr/bin/python3";
const KEYSTONE_MANAGE = "/usr/bin/keystone-manage";
const KEYSTONE_WSGI_PUBLIC = "/usr/bin/keystone-wsgi-public";
const UWSGI = "/usr/bin/uwsgi-core";
const UWSGI_PYTHON_PLUGIN = "/usr/lib/uwsgi/plugins/python3_plugin.so";
/** util-linux; makes uwsgi die with SIGKILL when the Node process (thread) that started it dies. */
const SETPRIV = "/usr/bin/setpriv";
const KEYSTONE_PACKAGE_DIR = "/usr/lib/python3/dist-packages";

/** Bump when the template's content or the config it is built with changes. */
const TEMPLATE_FORMAT = 3;
const REGION = "RegionOne";
const DEFAULT_DOMAIN = "Default";
/** bootstrap runs before the port is known: its identity endpoints get this URL, rewritten per instance. */
const PLACEHOLDER_URL = "http://127.0.0.1:9/v3";
const READY_TIMEOUT_MS = 90_000;
const REQUEST_TIMEOUT_MS = 30_000;
const PORT_ATTEMPTS = 3;
/** OTTAVA_KEYSTONE_KEEP=1: stop() leaves the temporary directory (logs, database) for a post-mortem. */
const KEEP = process.env.OTTAVA_KEYSTONE_KEEP === "1";

export type TokenScope =
  /** A project name in the Default domain. */
  | string
  | { system: "all" }
  | { projectId: string }
  /** Unscoped. */
  | null;

export interface IssuedToken {
  token: string;
  expiresAt: Date;
  /** The response body of POST /v3/auth/tokens: `{ token: { user, roles, project?, system?, catalog, ... } }`. */
  body: any;
}

export interface ShortLivedToken extends IssuedToken {
  applicationCredentialId: string;
}

export interface Keystone {
  /** e.g. http://127.0.0.1:PORT/v3 (the auth URL). */
  url: string;
  port: number;
  /** uwsgi's pid (also its process group). */
  pid: number;
  /** The temporary directory: keystone.conf, keystone.db, keystone.log, uwsgi.log, key repositories. */
  dir: string;
  adminUsername: "admin";
  adminPassword: string;
  adminProjectName: "admin";
  /** `[token] expiration` this instance runs with, in seconds. */
  tokenExpiration: number;
  /** Kills uwsgi (its whole process group) and removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
  /** A project-scoped token of admin on project admin; cached, renewed before it expires. */
  adminToken(): Promise<string>;
  adminUserId(): Promise<string>;
  adminProjectId(): Promise<string>;
  /** In the Default domain; answers its id. */
  createProject(name: string): Promise<string>;
  /** In the Default domain; answers its id. */
  createUser(name: string, password: string, defaultProjectId?: string): Promise<string>;
  /** Creates the global role unless it exists; answers its id. */
  ensureRole(name: string): Promise<string>;
  /** Grants the role (created if missing) on the project; answers the role id. */
  assignRole(userId: string, projectId: string, roleName: string): Promise<string>;
  /** Grants the role (created if missing) on the system scope `all`; answers the role id. */
  assignSystemRole(userId: string, roleName: string): Promise<string>;
  /** Password authentication of a Default-domain user; throws KeystoneError on a non-201 answer. */
  issueToken(username: string, password: string, scope: TokenScope): Promise<IssuedToken>;
  /**
   * GET /v3/auth/tokens with the admin token: 200 and the token body if valid, 404 if expired, revoked
   * or unknown. Never throws on an HTTP status (only on a connection error).
   */
  validateToken(token: string, opts?: { allowExpired?: boolean }): Promise<{ status: number; body: any }>;
  /** DELETE /v3/auth/tokens. */
  revokeToken(token: string): Promise<void>;
  /**
   * A token of the user on the project that expires `ttlSeconds` from now (an application credential with
   * that `expires_at`, see the header); the user must hold a role on the project.
   */
  issueShortLivedToken(username: string, password: string, projectName: string, ttlSeconds?: number): Promise<ShortLivedToken>;
  /** A token of the user on the project that has already expired (issueShortLivedToken + waiting ~1-2 s). */
  expiredToken(username: string, password: string, projectName: string): Promise<ShortLivedToken>;
  /**
   * Creates (or reuses) the service `name` of type `type` and its public, internal and admin endpoints in
   * RegionOne (updating their URL if they exist), e.g. ("load-balancer", "octavia", "http://127.0.0.1:9876").
   */
  registerEndpoint(type: string, name: string, url: string): Promise<{ serviceId: string; endpointIds: Record<EndpointInterface, string> }>;
  /** Raw call, base http://127.0.0.1:PORT, e.g. request("GET", "/v3/users", { token: await ks.adminToken() }). */
  request(method: string, path: string, opts?: RequestOptions): Promise<{ status: number; headers: Headers; body: any }>;
  /** The last lines of keystone.log and uwsgi.log, for failure messages. */
  logs(lines?: number): string;
}

export interface StartKeystoneOptions {
  /** `[token] expiration` in seconds (Keystone's default 3600). Every token, the admin's included, lives that long. */
  tokenExpiration?: number;
  /** Use (and build if missing) the per-machine template of a migrated and bootstrapped database. Default true. */
  template?: boolean;
  /** Keystone's `[cache]` (in-process memory backend). Default true; false for a token validation ~10x slower. */
  keystoneCache?: boolean;
  /**
   * uwsgi threads of the single process. Default 1: requests are served one at a time (queued in the
   * listen backlog), which measured as fast as 4 threads on this 2-core machine (Python's GIL). With
   * more, SQLAlchemy finalizes Keystone's leaked sqlite connections in another thread, which fails
   * ("SQLite objects created in a thread can only be used in that same thread", logged at ERROR) and
   * leaves them open. (Before WAL mode, see provision(), writes then failed with "database is locked" with
   * 4 threads as with 1.)
   */
  threads?: number;
  /** Progress messages (with timings). */
  log?: (msg: string) => void;
}

export type EndpointInterface = "public" | "internal" | "admin";
const INTERFACES: EndpointInterface[] = ["public", "internal", "admin"];

export interface RequestOptions {
  token?: string;
  subjectToken?: string;
  body?: unknown;
  /** Throw KeystoneError unless the status is one of these. */
  expect?: number[];
}

export class KeystoneError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
    this.name = "KeystoneError";
  }
}

// ---------------------------------------------------------------------------------------------------------

const live = new Set<{ pid: number; dir: string }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous only: kill every uwsgi still running and remove its directory. (A SIGKILLed Node runs no
  // hook; setpriv's parent-death signal covers that case.)
  process.on("exit", () => {
    for (const inst of live) {
      killGroup(inst.pid);
      try {
        rmSync(inst.dir, { recursive: true, force: true });
      } catch {}
    }
    live.clear();
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the directories of instances whose Node process died without its exit hook (SIGKILL, vitest
 * killing a worker): their uwsgi died with it (parent-death signal), their directory did not.
 */
function sweepStale(): void {
  if (KEEP) return;
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((n) => /^ottava-keystone-[A-Za-z0-9]{6}$/.test(n));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(tmpdir(), name);
    try {
      const owner = JSON.parse(readFileSync(join(dir, "owner.json"), "utf8"));
      const alive = (pid: unknown) => typeof pid === "number" && pid > 0 && isAlive(pid);
      if (owner.node !== process.pid && !alive(owner.node) && !alive(owner.uwsgi)) rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

function checkInstalled(): void {
  const missing = [KEYSTONE_MANAGE, KEYSTONE_WSGI_PUBLIC, UWSGI, UWSGI_PYTHON_PLUGIN].filter((p) => !existsSync(p));
  if (missing.length) {
    throw new Error(
      `Keystone test harness: missing ${missing.join(", ")}; install them with ` +
        "`apt-get install -y --no-install-recommends python3-keystone uwsgi-core uwsgi-plugin-python3`",
    );
  }
}

/** Environment for the Python processes: no pyenv/virtualenv leaking into Debian's python3. */
function pythonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ["PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "PYENV_VERSION"]) delete env[k];
  env.PYTHONDONTWRITEBYTECODE = "1";
  return env;
}

function keystoneConf(dir: string, o: { tokenExpiration: number; cache: boolean }): string {
  return [
    "[DEFAULT]",
    "debug = false",
    "use_stderr = false",
    `log_file = ${join(dir, "keystone.log")}`,
    "",
    "[database]",
    `connection = sqlite:///${join(dir, "keystone.db")}`,
    // No fsync: a throwaway database.
    "sqlite_synchronous = false",
    "",
    "[cache]",
    // In-process dogpile cache (one process, so invalidation on revocation & co. stays exact): token
    // validation goes from ~0.2 s (1.2 s with the machine loaded) to ~20 ms.
    `enabled = ${o.cache}`,
    "backend = dogpile.cache.memory",
    "",
    "[token]",
    "provider = fernet",
    `expiration = ${o.tokenExpiration}`,
    "",
    "[fernet_tokens]",
    `key_repository = ${join(dir, "fernet-keys")}`,
    "",
    "[fernet_receipts]",
    `key_repository = ${join(dir, "fernet-keys")}`,
    "",
    "[credential]",
    `key_repository = ${join(dir, "credential-keys")}`,
    "",
    "[identity]",
    // bcrypt's minimum cost: every password authentication and user creation hashes; the default (12)
    // costs ~0.3 s of CPU per token on this machine.
    "password_hash_rounds = 4",
    "",
  ].join("\n");
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<void> {
  return new Promise((resolve, reject) => {
    // Under setpriv too: a killed test process must not leave keystone-manage running (3-30 s of CPU).
    const [cmd, argv] = existsSync(SETPRIV) ? [SETPRIV, ["--pdeathsig", "SIGKILL", "--", file, ...args]] : [file, args];
    execFile(cmd, argv, { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const shown = (args[0] === "-c" ? ["-c", "<script>", ...args.slice(2)] : args).join(" ");
        reject(new Error(`${file} ${shown} failed (${err.code ?? err.signal}): ${`${stdout}\n${stderr}`.trim().slice(-4000)}`));
      } else resolve();
    });
  });
}

async function keystoneManage(conf: string, args: string[]): Promise<void> {
  await run(KEYSTONE_MANAGE, ["--config-file", conf, ...args], pythonEnv());
}

/** db_sync, fernet_setup and credential_setup (in parallel: they are independent), then bootstrap. */
async function provision(dir: string, adminPassword: string, log: (m: string) => void): Promise<void> {
  mkdirSync(join(dir, "fernet-keys"), { recursive: true, mode: 0o700 });
  mkdirSync(join(dir, "credential-keys"), { recursive: true, mode: 0o700 });
  const conf = join(dir, "keystone.conf");
  writeFileSync(conf, keystoneConf(dir, { tokenExpiration: 3600, cache: false }));
  const { username } = userInfo();
  const group = primaryGroupName();
  const owner = ["--keystone-user", username, "--keystone-group", group];
  let t = Date.now();
  await Promise.all([
    keystoneManage(conf, ["db_sync"]),
    (async () => {
      await keystoneManage(conf, ["fernet_setup", ...owner]);
      await keystoneManage(conf, ["credential_setup", ...owner]);
    })(),
  ]);
  log(`keystone: db_sync + fernet_setup + credential_setup ${Date.now() - t} ms`);
  t = Date.now();
  await keystoneManage(conf, [
    "bootstrap",
    "--bootstrap-username",
    "admin",
    "--bootstrap-password",
    adminPassword,
    "--bootstrap-project-name",
    "admin",
    "--bootstrap-role-name",
    "admin",
    "--bootstrap-service-name",
    "keystone",
    "--bootstrap-region-id",
    REGION,
    "--bootstrap-public-url",
    PLACEHOLDER_URL,
    "--bootstrap-internal-url",
    PLACEHOLDER_URL,
    "--bootstrap-admin-url",
    PLACEHOLDER_URL,
  ]);
  log(`keystone: bootstrap ${Date.now() - t} ms`);
  // WAL: oslo.db emits BEGIN for reads too, and Keystone leaks some read sessions (until the garbage
  // collector closes them). In sqlite's default rollback-journal mode such a leaked reader keeps its
  // SHARED lock, and the next write in the SAME single process fails after 5 s with "database is locked"
  // (seen on POST /v3/endpoints right after a PATCH). In WAL mode readers never block the writer.
  // The mode is persistent, stored in the database file (and so in its copies).
  await run(PYTHON, ["-c", SET_WAL, join(dir, "keystone.db")], pythonEnv());
}

/** argv: database, old URL, new URL. */
const REWRITE_ENDPOINTS = [
  "import sqlite3, sys",
  "c = sqlite3.connect(sys.argv[1])",
  "n = c.execute('UPDATE endpoint SET url = ? WHERE url = ?', (sys.argv[3], sys.argv[2])).rowcount",
  "c.commit()",
  "c.close()",
  "sys.exit(0 if n == 3 else 'rewrote %d endpoints, expected 3' % n)",
].join("\n");

const SET_WAL = [
  "import sqlite3, sys",
  "c = sqlite3.connect(sys.argv[1])",
  "mode = c.execute('PRAGMA journal_mode=WAL').fetchone()[0]",
  "c.close()",
  "sys.exit(0 if mode == 'wal' else 'journal_mode is ' + mode)",
].join("\n");

function primaryGroupName(): string {
  const gid = process.getgid?.() ?? 0;
  try {
    for (const line of readFileSync("/etc/group", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (name && id !== undefined && Number(id) === gid) return name;
    }
  } catch {}
  return String(gid);
}

function templateKey(): string {
  const h = createHash("sha256");
  h.update(`format ${TEMPLATE_FORMAT}\n`);
  h.update(
    readdirSync(KEYSTONE_PACKAGE_DIR)
      .filter((n) => /^keystone[-_]/i.test(n))
      .sort()
      .join(",") + "\n",
  );
  h.update(`${statSync(KEYSTONE_MANAGE).mtimeMs} ${statSync(join(KEYSTONE_PACKAGE_DIR, "keystone", "__init__.py")).mtimeMs}\n`);
  h.update(keystoneConf("/DIR", { tokenExpiration: 3600, cache: false }));
  return h.digest("hex").slice(0, 16);
}

export interface KeystoneTemplate {
  dir: string;
  adminPassword: string;
}

let templatePromise: Promise<KeystoneTemplate> | undefined;
const TEMPLATE_WAIT_MS = 10 * 60_000;

/**
 * The per-machine template, built on first use. Test workers starting together do not all build it (that
 * took 42 s instead of 15 s with two on this 2-core machine): the first takes a lock directory, the
 * others wait for its result; a lock whose process died is taken over.
 */
export function prepareKeystoneTemplate(log: (m: string) => void = () => {}): Promise<KeystoneTemplate> {
  templatePromise ??= (async () => {
    checkInstalled();
    const dir = join(tmpdir(), `ottava-keystone-template-${templateKey()}`);
    const lock = `${dir}.lock`;
    const read = (): KeystoneTemplate | undefined => {
      try {
        const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8"));
        if (meta.format === TEMPLATE_FORMAT && existsSync(join(dir, "keystone.db"))) return { dir, adminPassword: meta.adminPassword };
      } catch {}
      return undefined;
    };
    const waitStarted = Date.now();
    let waiting = false;
    for (;;) {
      const found = read();
      if (found) return found;
      try {
        mkdirSync(lock);
        writeFileSync(join(lock, "pid"), String(process.pid));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        let owner = NaN;
        try {
          owner = Number(readFileSync(join(lock, "pid"), "utf8"));
        } catch {}
        const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if ((Number.isFinite(owner) && owner > 0 && !isAlive(owner)) || (!Number.isFinite(owner) && age > 10_000)) {
          rmSync(lock, { recursive: true, force: true }); // its builder died
          continue;
        }
        if (!waiting) log(`keystone: waiting for process ${owner} to build the template`);
        waiting = true;
        if (Date.now() - waitStarted > TEMPLATE_WAIT_MS) throw new Error(`keystone: gave up waiting for ${lock}`);
        await sleep(250);
        continue;
      }
      try {
        const found = read(); // built between our check and our lock
        if (found) return found;
        // Holding the lock, any build directory is a dead builder's leftover.
        const prefix = `${basename(dir)}.build-`;
        for (const n of readdirSync(tmpdir())) if (n.startsWith(prefix)) rmSync(join(tmpdir(), n), { recursive: true, force: true });
        const t = Date.now();
        const build = mkdtempSync(`${dir}.build-`);
        try {
          const adminPassword = randomBytes(12).toString("hex");
          await provision(build, adminPassword, log);
          rmSync(join(build, "keystone.log"), { force: true });
          writeFileSync(join(build, "meta.json"), JSON.stringify({ format: TEMPLATE_FORMAT, adminPassword }));
          rmSync(dir, { recursive: true, force: true }); // a broken leftover
          renameSync(build, dir);
          log(`keystone: template built in ${Date.now() - t} ms at ${dir}`);
          return { dir, adminPassword };
        } finally {
          rmSync(build, { recursive: true, force: true });
        }
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
  })();
  templatePromise.catch(() => (templatePromise = undefined));
  return templatePromise;
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .slice(-lines - 1)
      .join("\n");
  } catch {
    return "";
  }
}

/**
 * Parses a Keystone `expires_at`. Trap: a token issued with an application credential says e.g.
 * "2026-11-22T16:19:02.353000" (the credential's expires_at.isoformat(): no zone, meaning UTC, which
 * `new Date()` reads as local time), in the issue response and, while Keystone's cache holds the token,
 * in validation responses too. Once that cache entry is gone, validation decodes the fernet payload,
 * which keeps whole seconds only: "2026-11-22T16:19:02.000000Z" (the token then expires up to 1 s
 * earlier). So the instant answered here is the latest one at which the token may still validate.
 */
export function tokenExpiry(expiresAt: string): Date {
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(expiresAt) ? expiresAt : `${expiresAt}Z`;
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms)) throw new Error(`keystone: unparsable expires_at ${JSON.stringify(expiresAt)}`);
  return new Date(ms);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class PortInUse extends Error {}

/** Spawns uwsgi and waits until GET /v3 answers 200. */
async function serve(dir: string, port: number, threads: number): Promise<ChildProcess> {
  const uwsgiLog = join(dir, "uwsgi.log");
  const args = [
    "--plugins",
    "python3",
    "--http-socket",
    `127.0.0.1:${port}`,
    "--wsgi-file",
    KEYSTONE_WSGI_PUBLIC,
    // ONE process: sqlite + several processes fails the first writes with "database is locked".
    "--processes",
    "1",
    // and one thread by default, see StartKeystoneOptions.threads.
    ...(threads > 1 ? ["--threads", String(threads)] : []),
    "--single-interpreter",
    "--need-app",
    "--die-on-term",
    "--disable-logging",
    "--buffer-size",
    "65535",
    // uwsgi's plain --http-socket closes the connection after every response without saying so, and
    // Node's fetch (undici) then reuses the dead keep-alive socket: "SocketError: other side closed".
    "--add-header",
    "Connection: close",
    "--logto",
    uwsgiLog,
  ];
  const useSetpriv = existsSync(SETPRIV);
  const [file, argv] = useSetpriv ? [SETPRIV, ["--pdeathsig", "SIGKILL", "--", UWSGI, ...args]] : [UWSGI, args];
  writeFileSync(uwsgiLog, ""); // a fresh log per attempt: the port check below reads it
  const out = openSync(uwsgiLog, "a"); // O_APPEND, like uwsgi's own --logto
  let child: ChildProcess;
  try {
    child = spawn(file, argv, {
      cwd: dir,
      env: pythonEnv({ OS_KEYSTONE_CONFIG_FILES: join(dir, "keystone.conf") }),
      // Own process group, so stop() can kill uwsgi and anything it forked at once.
      detached: true,
      stdio: ["ignore", out, out],
    });
  } finally {
    closeSync(out);
  }
  // Do not keep a test process alive just for uwsgi: the exit hook (and the parent-death signal) kill it.
  child.unref();
  let exited: string | undefined;
  const entry = { pid: child.pid ?? 0, dir };
  if (child.pid !== undefined) live.add(entry);
  child.once("exit", (code, signal) => {
    exited = `exit ${code ?? signal}`;
    live.delete(entry); // never signal a pid that may have been reused
  });
  child.once("error", (err) => (exited = err.message));

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited !== undefined) {
      const logText = tail(uwsgiLog, 30);
      if (/Address already in use/.test(logText)) throw new PortInUse(`port ${port} taken`);
      throw new Error(
        `keystone: uwsgi ${exited} before answering\n--- uwsgi.log ---\n${logText}\n--- keystone.log ---\n${tail(join(dir, "keystone.log"), 30)}`,
      );
    }
    try {
      // uwsgi listens before the app is loaded: this first request waits in the backlog until it is.
      const res = await fetch(`http://127.0.0.1:${port}/v3`, { signal: AbortSignal.timeout(Math.max(1_000, deadline - Date.now())) });
      await res.arrayBuffer();
      if (res.status === 200) return child;
    } catch {}
    if (Date.now() > deadline) {
      if (child.pid !== undefined) killGroup(child.pid);
      throw new Error(`keystone: no answer on port ${port} after ${READY_TIMEOUT_MS} ms\n--- uwsgi.log ---\n${tail(uwsgiLog, 30)}`);
    }
    await sleep(100);
  }
}

export async function startKeystone(opts: StartKeystoneOptions = {}): Promise<Keystone> {
  checkInstalled();
  installExitHook();
  sweepStale();
  const log = opts.log ?? (() => {});
  const tokenExpiration = opts.tokenExpiration ?? 3600;
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "ottava-keystone-"));
  const writeOwner = (uwsgi: number | null) => writeFileSync(join(dir, "owner.json"), JSON.stringify({ node: process.pid, uwsgi }));
  writeOwner(null); // for sweepStale(), should this process die before stop()
  let child: ChildProcess | undefined;
  let port = 0;
  let adminPassword: string;
  try {
    if (opts.template === false) {
      adminPassword = randomBytes(12).toString("hex");
      await provision(dir, adminPassword, log);
    } else {
      const tpl = await prepareKeystoneTemplate(log);
      adminPassword = tpl.adminPassword;
      for (const name of ["keystone.db", "fernet-keys", "credential-keys"])
        cpSync(join(tpl.dir, name), join(dir, name), { recursive: true });
    }
    writeFileSync(join(dir, "keystone.conf"), keystoneConf(dir, { tokenExpiration, cache: opts.keystoneCache ?? true }));
    const t = Date.now();
    for (let attempt = 1; ; attempt++) {
      const previous = port ? `http://127.0.0.1:${port}/v3` : PLACEHOLDER_URL;
      port = await freePort();
      // Point bootstrap's identity endpoints (public, internal, admin) at this instance, for clients that
      // follow the catalog (the openstack CLI). Directly in the database: ~0.1 s instead of ~1.5 s of API calls.
      await run(PYTHON, ["-c", REWRITE_ENDPOINTS, join(dir, "keystone.db"), previous, `http://127.0.0.1:${port}/v3`], pythonEnv());
      try {
        child = await serve(dir, port, opts.threads ?? 1);
        break;
      } catch (err) {
        if (!(err instanceof PortInUse) || attempt >= PORT_ATTEMPTS) throw err;
      }
    }
    log(`keystone: uwsgi answering on ${port} after ${Date.now() - t} ms`);
  } catch (err) {
    for (const inst of live) if (inst.dir === dir) (killGroup(inst.pid), live.delete(inst));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const proc = child;
  writeOwner(proc.pid!);
  const base = `http://127.0.0.1:${port}`;
  const url = `${base}/v3`;

  const request: Keystone["request"] = async (method, path, ro = {}) => {
    const headers: Record<string, string> = { accept: "application/json" };
    if (ro.token) headers["x-auth-token"] = ro.token;
    if (ro.subjectToken) headers["x-subject-token"] = ro.subjectToken;
    if (ro.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(base + path, {
      method,
      headers,
      body: ro.body === undefined ? undefined : JSON.stringify(ro.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {}
    if (ro.expect && !ro.expect.includes(res.status)) {
      throw new KeystoneError(`keystone: ${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`, res.status, body);
    }
    return { status: res.status, headers: res.headers, body };
  };

  const issueToken: Keystone["issueToken"] = async (username, password, scope) => {
    const auth: any = {
      identity: { methods: ["password"], password: { user: { name: username, domain: { name: DEFAULT_DOMAIN }, password } } },
    };
    if (typeof scope === "string") auth.scope = { project: { name: scope, domain: { name: DEFAULT_DOMAIN } } };
    else if (scope && "system" in scope) auth.scope = { system: { all: true } };
    else if (scope && "projectId" in scope) auth.scope = { project: { id: scope.projectId } };
    const res = await request("POST", "/v3/auth/tokens", { body: { auth }, expect: [201] });
    return { token: res.headers.get("x-subject-token")!, expiresAt: tokenExpiry(res.body.token.expires_at), body: res.body };
  };

  let admin: IssuedToken | undefined;
  let adminPending: Promise<IssuedToken> | undefined;
  const adminIssued = async (): Promise<IssuedToken> => {
    // Renew when less than a third of the lifetime (at most a minute) is left.
    const margin = Math.min(60_000, (tokenExpiration * 1000) / 3);
    if (admin && admin.expiresAt.getTime() - Date.now() > margin) return admin;
    adminPending ??= issueToken("admin", adminPassword, "admin").finally(() => (adminPending = undefined));
    admin = await adminPending;
    return admin;
  };
  const adminToken = async () => (await adminIssued()).token;
  const asAdmin = async (method: string, path: string, body: unknown, expect: number[]) =>
    (await request(method, path, { token: await adminToken(), body, expect })).body;

  const roleIds = new Map<string, string>();
  const ensureRole = async (name: string): Promise<string> => {
    const known = roleIds.get(name);
    if (known) return known;
    const find = async () =>
      (await asAdmin("GET", `/v3/roles?name=${encodeURIComponent(name)}`, undefined, [200])).roles[0]?.id as string | undefined;
    let id = await find();
    if (!id) {
      const res = await request("POST", "/v3/roles", { token: await adminToken(), body: { role: { name } } });
      if (res.status === 201) id = res.body.role.id as string;
      else if (res.status === 409) id = await find();
      if (!id) throw new KeystoneError(`keystone: cannot create role ${name}: ${res.status}`, res.status, res.body);
    }
    roleIds.set(name, id);
    return id;
  };

  const registerEndpoint: Keystone["registerEndpoint"] = async (type, name, endpointUrl) => {
    const services = (await asAdmin("GET", `/v3/services?type=${encodeURIComponent(type)}`, undefined, [200])).services as any[];
    let serviceId = services.find((s) => s.name === name)?.id as string | undefined;
    serviceId ??= (await asAdmin("POST", "/v3/services", { service: { type, name, enabled: true } }, [201])).service.id as string;
    const existing = (await asAdmin("GET", `/v3/endpoints?service_id=${serviceId}`, undefined, [200])).endpoints as any[];
    const endpointIds = {} as Record<EndpointInterface, string>;
    for (const iface of INTERFACES) {
      const ep = existing.find((e) => e.interface === iface && (e.region_id ?? e.region) === REGION);
      endpointIds[iface] = ep
        ? (await asAdmin("PATCH", `/v3/endpoints/${ep.id}`, { endpoint: { url: endpointUrl } }, [200])).endpoint.id
        : (
            await asAdmin(
              "POST",
              "/v3/endpoints",
              { endpoint: { service_id: serviceId, interface: iface, region_id: REGION, url: endpointUrl, enabled: true } },
              [201],
            )
          ).endpoint.id;
    }
    return { serviceId, endpointIds };
  };

  const issueShortLivedToken: Keystone["issueShortLivedToken"] = async (username, password, projectName, ttlSeconds = 2) => {
    const user = await issueToken(username, password, projectName);
    const userId = user.body.token.user.id as string;
    // Application-credential authentication of an already expired credential fails with 401: retry longer.
    for (let ttl = ttlSeconds; ; ttl *= 2) {
      // A whole second: the fernet payload keeps whole seconds, the cached token model the exact
      // instant; this way both agree (see tokenExpiry).
      const expiresAt = new Date(Math.ceil((Date.now() + ttl * 1000) / 1000) * 1000);
      const secret = randomBytes(16).toString("hex");
      const cred = (
        await request("POST", `/v3/users/${userId}/application_credentials`, {
          token: user.token,
          body: { application_credential: { name: `short-lived-${randomUUID()}`, secret, expires_at: expiresAt.toISOString() } },
          expect: [201],
        })
      ).body.application_credential;
      const res = await request("POST", "/v3/auth/tokens", {
        body: { auth: { identity: { methods: ["application_credential"], application_credential: { id: cred.id, secret } } } },
      });
      if (res.status === 201) {
        return {
          token: res.headers.get("x-subject-token")!,
          expiresAt: tokenExpiry(res.body.token.expires_at),
          body: res.body,
          applicationCredentialId: cred.id as string,
        };
      }
      if (res.status !== 401 || ttl >= 60) {
        throw new KeystoneError(`keystone: application credential authentication answered ${res.status}`, res.status, res.body);
      }
    }
  };

  const validateToken: Keystone["validateToken"] = async (token, vo = {}) => {
    const res = await request("GET", `/v3/auth/tokens${vo.allowExpired ? "?allow_expired=true" : ""}`, {
      token: await adminToken(),
      subjectToken: token,
    });
    return { status: res.status, body: res.body };
  };

  let stopPromise: Promise<void> | undefined;
  const stop = () => {
    stopPromise ??= (async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const gone = new Promise<void>((r) => proc.once("exit", () => r()));
        killGroup(proc.pid!);
        await Promise.race([gone, sleep(5_000)]);
      }
      for (const inst of live) if (inst.dir === dir) live.delete(inst);
      if (!KEEP) rmSync(dir, { recursive: true, force: true });
    })();
    return stopPromise;
  };

  const ks: Keystone = {
    url,
    port,
    pid: proc.pid!,
    dir,
    adminUsername: "admin",
    adminPassword,
    adminProjectName: "admin",
    tokenExpiration,
    stop,
    adminToken,
    adminUserId: async () => (await adminIssued()).body.token.user.id,
    adminProjectId: async () => (await adminIssued()).body.token.project.id,
    createProject: async (name) =>
      (await asAdmin("POST", "/v3/projects", { project: { name, domain_id: "default", enabled: true } }, [201])).project.id,
    createUser: async (name, password, defaultProjectId) =>
      (
        await asAdmin(
          "POST",
          "/v3/users",
          {
            user: {
              name,
              password,
              domain_id: "default",
              enabled: true,
              ...(defaultProjectId ? { default_project_id: defaultProjectId } : {}),
            },
          },
          [201],
        )
      ).user.id,
    ensureRole,
    assignRole: async (userId, projectId, roleName) => {
      const roleId = await ensureRole(roleName);
      await asAdmin("PUT", `/v3/projects/${projectId}/users/${userId}/roles/${roleId}`, undefined, [204]);
      return roleId;
    },
    assignSystemRole: async (userId, roleName) => {
      const roleId = await ensureRole(roleName);
      await asAdmin("PUT", `/v3/system/users/${userId}/roles/${roleId}`, undefined, [204]);
      return roleId;
    },
    issueToken,
    validateToken,
    revokeToken: async (token) => {
      await request("DELETE", "/v3/auth/tokens", { token: await adminToken(), subjectToken: token, expect: [204] });
    },
    issueShortLivedToken,
    expiredToken: async (username, password, projectName) => {
      const t = await issueShortLivedToken(username, password, projectName, 1);
      // Keystone compares with its own clock (the same as ours): wait past expires_at, then make sure.
      await sleep(Math.max(0, t.expiresAt.getTime() - Date.now()) + 50);
      for (let i = 0; (await validateToken(t.token)).status !== 404; i++) {
        if (i >= 50) throw new Error("keystone: the short-lived token did not expire");
        await sleep(100);
      }
      return t;
    },
    registerEndpoint,
    request,
    logs: (lines = 40) =>
      `--- keystone.log ---\n${tail(join(dir, "keystone.log"), lines)}\n--- uwsgi.log ---\n${tail(join(dir, "uwsgi.log"), lines)}`,
  };

  log(`keystone: started in ${Date.now() - started} ms`);
  return ks;
}

// npm run test:image: the amphora image scripts (packages/aws/image/) in a real Debian 12 root. Debian's mmdebstrap builds the root from the Debian archive; install.sh runs there twice; then ottava-amphora-configure runs there, unchanged, against moto on this host's loopback, and the amphora agent it starts must answer over mutual TLS and send its heartbeats. Minutes long: not part of npm test.
//
// Usage (root): npm run test:image [-- --rebuild]. The stock root (before install.sh) is cached as a tarball in
// ~/.cache/ottava-image/ (XDG_CACHE_HOME); --rebuild makes it again. install.sh always runs afresh, in a copy.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createSocket } from "node:dgram";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  cpSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { fileURLToPath } from "node:url";
import { unwrapEnvelope } from "@ottava/core";
import { AmphoraApiClient, CLIENT_CERT_CN, freePort, renderAgentConfig } from "@ottava/amphora";
import { createLocalCa, LocalCertGenerator } from "@ottava/controller";
import { amphoraSecretString, createMotoSecret, IMAGE_DIR, startMoto, type Moto } from "@ottava/aws/testing";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const ENTER = join(HERE, "enter.sh");
const STANDINS = fileURLToPath(new URL("../support/agent/", import.meta.url));
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "ottava-image");
const BASE = join(CACHE, "debian12-base.tar");
/** What a stock Debian 12 image's apt reads: the release, its updates and its security updates. */
const SOURCES = [
  "deb http://deb.debian.org/debian bookworm main",
  "deb http://deb.debian.org/debian bookworm-updates main",
  "deb http://deb.debian.org/debian-security bookworm-security main",
];
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const started = Date.now();
const timings: string[] = [];
const secs = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
const say = (line: string) => console.log(`test:image: ${line}`);

async function step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  say(`${name} ...`);
  const t = Date.now();
  const r = await fn();
  timings.push(`${name}: ${secs(Date.now() - t)}`);
  say(`${name}: done in ${secs(Date.now() - t)}`);
  return r;
}

function check(ok: unknown, message: string): asserts ok {
  if (!ok) throw new Error(message);
}

function run(cmd: string, args: string[], opts: { log?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 28, env: opts.env ?? process.env });
  if (opts.log) writeFileSync(opts.log, `${r.stdout}\n--- stderr\n${r.stderr}`);
  if (r.status !== 0) {
    const tail = `${r.stdout}\n${r.stderr}`.split("\n").slice(-40).join("\n");
    throw new Error(`${cmd} ${args.join(" ")} failed (${r.status ?? r.signal}):\n${tail}`);
  }
  return r.stdout;
}

/** What the machine needs; a clear message when it lacks it. */
function preflight() {
  check(process.getuid?.() === 0, "npm run test:image needs root (mmdebstrap's root mode, chroot, namespaces)");
  const need: [string, string][] = [
    ["mmdebstrap", "Debian's mmdebstrap: apt-get install -y mmdebstrap"],
    ["unshare", "util-linux's unshare"],
    ["chroot", "coreutils' chroot"],
    ["moto_server", "moto (5.2.1), which this kind of machine has in its pyenv Python"],
  ];
  for (const [bin, what] of need) {
    check(spawnSync("/bin/sh", ["-c", `command -v ${bin}`]).status === 0, `npm run test:image needs ${what}: ${bin} is not on PATH`);
  }
}

/** The host's Acquire options (how it reaches Debian's archive): every apt.conf.d file that sets one. mmdebstrap reads only the new root's configuration. */
function hostAcquireOptions(): string[] {
  const dir = "/etc/apt/apt.conf.d";
  return readdirSync(dir)
    .map((f) => join(dir, f))
    .filter((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .some((l) => /^\s*Acquire\b/.test(l)),
    )
    .map((f) => `--aptopt=${f}`);
}

/** The stock root: Debian 12's required and important packages (systemd, apt, ...), as mmdebstrap makes it. */
function baseRoot(rebuild: boolean): string {
  if (existsSync(BASE) && !rebuild) {
    timings.push(`stock root: cached (${BASE}, made ${statSync(BASE).mtime.toISOString()})`);
    say(`stock root: cached ${BASE}`);
    return "cached";
  }
  mkdirSync(CACHE, { recursive: true });
  const partial = `${BASE}.partial`;
  rmSync(partial, { force: true });
  const args = ["--variant=important", "--format=tar", ...hostAcquireOptions(), "bookworm", partial, ...SOURCES];
  say(`mmdebstrap ${args.join(" ")}`);
  const t = Date.now();
  run("mmdebstrap", args, { log: join(CACHE, "mmdebstrap.log") });
  renameSync(partial, BASE);
  timings.push(`stock root: built by mmdebstrap in ${secs(Date.now() - t)}`);
  return "built";
}

/** Runs a command in the root through enter.sh, as PID 1 of new PID and mount namespaces. */
function enter(root: string, args: string[], opts: { standins?: boolean; hold?: boolean } = {}): ChildProcess {
  return spawn(
    "unshare",
    [
      "--pid",
      "--mount",
      "--fork",
      "--propagation",
      "private",
      "--kill-child",
      ENTER,
      root,
      opts.standins ? STANDINS : "-",
      opts.hold ? "hold" : "exit",
      ...args,
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
}

/** Runs a command in the root to its end; its output goes to `log`; throws on failure. */
async function inRoot(root: string, args: string[], log: string): Promise<string> {
  const child = enter(root, ["/usr/bin/env", "-i", `PATH=${PATH}`, "LANG=C.UTF-8", "HOME=/root", ...args]);
  child.stdin!.end();
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  writeFileSync(log, out);
  if (code !== 0)
    throw new Error(`${args.join(" ")} in the root failed (${code}); the end of ${log}:\n${out.split("\n").slice(-40).join("\n")}`);
  return out;
}

/** The version of a package installed in the root, as the agent reads it (dpkg-query -W -f=${Version}). */
const versionIn = (root: string, pkg: string) => run("chroot", [root, "dpkg-query", "-W", "-f=${Version}", pkg]).trim();

async function main() {
  preflight();
  const rebuild = process.argv.includes("--rebuild");
  await step("stock Debian 12 root", () => baseRoot(rebuild));
  const work = mkdtempSync("/var/tmp/ottava-image-");
  const root = join(work, "root");
  let moto: Moto | undefined;
  let amphora: ChildProcess | undefined;
  try {
    mkdirSync(root);
    await step("root unpacked", () => run("tar", ["-C", root, "-xf", BASE]));
    say(`root: ${root} (Debian ${readFileSync(join(root, "etc/debian_version"), "utf8").trim()})`);
    // As the first-boot path has them: the image scripts under /var/lib/ottava/image/.
    cpSync(IMAGE_DIR, join(root, "var/lib/ottava/image"), { recursive: true });
    const install = ["sh", "/var/lib/ottava/image/install.sh"];
    await step("install.sh, first run", () => inRoot(root, install, join(work, "install-1.log")));
    await step("install.sh, second run", () => inRoot(root, install, join(work, "install-2.log")));

    await step("the image's layout", async () => {
      const enabled = (unit: string) => spawnSync("chroot", [root, "systemctl", "is-enabled", unit], { encoding: "utf8" }).stdout.trim();
      check(enabled("haproxy.service") === "disabled", `Debian's haproxy.service is ${enabled("haproxy.service")}, not disabled`);
      check(enabled("keepalived.service") === "disabled", `Debian's keepalived.service is ${enabled("keepalived.service")}, not disabled`);
      check(
        enabled("amphora-agent.service") === "disabled",
        `amphora-agent.service is ${enabled("amphora-agent.service")} before the configure step`,
      );
      await inRoot(root, ["systemd-analyze", "verify", "/usr/lib/systemd/system/amphora-agent.service"], join(work, "verify.log"));
      for (const f of [
        "usr/bin/amphora-agent",
        "usr/local/sbin/ottava-amphora-configure",
        "usr/local/sbin/ottava-vrrp-master",
        "usr/local/sbin/octavia-agent-lvs-masquerade",
        "var/lib/octavia/ping-wrapper.sh",
      ]) {
        check(statSync(join(root, f)).mode & 0o100, `/${f} is not executable`);
      }
      check(
        readFileSync(join(root, "var/lib/octavia/haproxy-default-user-group.conf"), "utf8") === "global\n    group nogroup\n",
        "haproxy-default-user-group.conf",
      );
      check((statSync(join(root, "etc/octavia/certs")).mode & 0o777) === 0o700, "/etc/octavia/certs is not 0700");
      check(!existsSync(join(root, "usr/sbin/policy-rc.d")), "install.sh left /usr/sbin/policy-rc.d behind");
    });

    // The controller's side, as the EC2 compute driver prepares a boot: a CA, the amphora's certificate, its
    // agent configuration (here bound to 127.0.0.1 on a free port, heartbeats to this process), its secret.
    moto = await step("moto_server", () => startMoto());
    const ca = await createLocalCa({ commonName: "Ottava image test CA" });
    const gen = new LocalCertGenerator(() => ca);
    const amp = { id: randomUUID(), lb_network_ip: "127.0.0.1" };
    const port = await freePort();
    const heartbeats = createSocket("udp4");
    await new Promise<void>((r) => heartbeats.bind(0, "127.0.0.1", () => r()));
    const heartbeatKey = randomBytes(16).toString("hex");
    const serverPem = (await gen.generateServerPem(amp.id, 3600)).pem;
    const agentConf = renderAgentConfig(
      { amphora: amp, topology: "SINGLE", controllerIpPortList: [`127.0.0.1:${heartbeats.address().port}`], heartbeatKey },
      { bindHost: "127.0.0.1", bindPort: port, heartbeatInterval: 1, debug: true },
    );
    const secretId = `ottava/image-test/amphora/${amp.id}`;
    // What the user data writes (cloud-init's write_files): the controller CA, and where the secret is.
    mkdirSync(join(root, "etc/ottava"), { recursive: true });
    writeFileSync(join(root, "etc/octavia/certs/client_ca.pem"), ca.certificate, { mode: 0o644 });
    writeFileSync(
      join(root, "etc/ottava/amphora.json"),
      JSON.stringify({ region: "us-east-1", secret_id: secretId, secretsmanager_endpoint: moto.endpoint }),
    );

    const configureOut = await step("ottava-amphora-configure in the root (the secret made 3 s after it starts)", async () => {
      amphora = enter(
        root,
        [
          "/usr/bin/env",
          "-i",
          `PATH=${PATH}`,
          "LANG=C.UTF-8",
          "HOME=/root",
          // The default credential chain's first source; moto accepts any.
          "AWS_ACCESS_KEY_ID=testing",
          "AWS_SECRET_ACCESS_KEY=testing",
          "/usr/local/sbin/ottava-amphora-configure",
          "/etc/ottava/amphora.json",
        ],
        { standins: true, hold: true },
      );
      let out = "";
      amphora.stdout!.on("data", (d) => (out += d));
      amphora.stderr!.on("data", (d) => (out += d));
      await new Promise((r) => setTimeout(r, 3000));
      await createMotoSecret(moto!.endpoint, secretId, amphoraSecretString(serverPem, agentConf));
      for (const t = Date.now(); !/ottava-enter: exit \d+/.test(out);) {
        check(Date.now() - t < 120_000 && amphora.exitCode === null, `ottava-amphora-configure did not finish:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      check(/ottava-enter: exit 0/.test(out), `ottava-amphora-configure failed:\n${out}`);
      return out;
    });
    say(`its output:\n${configureOut.replace(/^/gm, "    ")}`);
    check(/not readable yet \(ResourceNotFoundException, try 1\)/.test(configureOut), "configure did not wait for the secret");
    for (const secret of [heartbeatKey, serverPem.split("\n")[1]!, serverPem.split("\n").slice(-3)[0]!]) {
      check(!configureOut.includes(secret), "configure printed part of the secret");
    }
    for (const f of ["etc/octavia/certs/server.pem", "etc/octavia/amphora-agent.conf"]) {
      check((statSync(join(root, f)).mode & 0o777) === 0o600, `/${f} is not 0600`);
    }
    check(readFileSync(join(root, "etc/octavia/certs/server.pem"), "utf8") === serverPem, "server.pem is not the secret's");

    const tls = { ca: ca.certificate, clientPem: (await gen.generateServerPem(CLIENT_CERT_CN, 3600)).pem };
    const info = await step("the agent's API over mutual TLS (GET info)", async () => {
      const client = new AmphoraApiClient({ port, tls, connTimeout: 5, readTimeout: 30, retries: { maxRetries: 60, retryInterval: 1 } });
      try {
        return await client.getInfo(amp);
      } catch (e) {
        const log = (p: string) =>
          existsSync(join(root, p)) ? readFileSync(join(root, p), "utf8").split("\n").slice(-30).join("\n") : "(none)";
        throw new Error(`${(e as Error).message}\n--- /var/log/amphora-agent.log\n${log("var/log/amphora-agent.log")}`);
      } finally {
        client.close();
      }
    });
    const haproxy = versionIn(root, "haproxy");
    say(`GET info: ${JSON.stringify(info)}`);
    check(info.api_version === "1.0", `api_version ${String(info.api_version)}`);
    check(info.haproxy_version === haproxy, `haproxy_version ${String(info.haproxy_version)}, the root has ${haproxy}`);

    await step("a client without a certificate is refused", async () => {
      const refused = await new Promise<boolean>((resolve) => {
        const s = connect({ host: "127.0.0.1", port, ca: ca.certificate, servername: amp.id, checkServerIdentity: () => undefined });
        s.once("secureConnect", () => {
          s.write("GET /1.0/info HTTP/1.0\r\n\r\n");
          let body = "";
          s.on("data", (d) => (body += d));
          s.once("close", () => resolve(!body.includes("api_version")));
        });
        s.once("error", () => resolve(true));
        s.setTimeout(10_000, () => (s.destroy(), resolve(false)));
      });
      check(refused, "the agent answered a client with no certificate");
    });

    const beat = await step("a heartbeat from the agent, signed with the secret's key", async () => {
      const envelope = await new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no heartbeat within 30 s")), 30_000);
        heartbeats.once("message", (m) => (clearTimeout(timer), resolve(m)));
      });
      heartbeats.close();
      return unwrapEnvelope(envelope, heartbeatKey) as { id?: string };
    });
    check(beat.id === amp.id, `the heartbeat names ${String(beat.id)}, not ${amp.id}`);

    const versions = ["haproxy", "keepalived", "ipvsadm", "python3-octavia", "python3-boto3", "rsyslog"].map(
      (p) => `${p} ${versionIn(root, p)}`,
    );
    say(`passed in ${secs(Date.now() - started)}`);
    for (const t of timings) say(`  ${t}`);
    say(`  Debian ${readFileSync(join(root, "etc/debian_version"), "utf8").trim()}: ${versions.join(", ")}`);
  } finally {
    if (amphora && amphora.exitCode === null) {
      amphora.stdin!.end(); // PID 1 leaves; the kernel ends the agent, rsyslog and the rest with it
      await Promise.race([new Promise((r) => amphora!.once("exit", r)), new Promise((r) => setTimeout(r, 5000))]);
      if (amphora.exitCode === null) amphora.kill("SIGKILL");
    }
    await moto?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`test:image: FAILED after ${secs(Date.now() - started)}: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});

// The amphora image scripts (packages/aws/image/): their syntax, and ottava-amphora-configure run on this host against moto with Debian's python3-boto3, in a private mount namespace whose /etc is an overlay (nothing of the host's /etc changes): the secret waited for, the agent's files written 0600, the agent enabled and started, and no secret in its output. npm run test:image runs them in a real Debian 12 root.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { amphoraSecretString, createMotoSecret, IMAGE_DIR, startMoto, type Moto } from "./support";

const CONFIGURE = join(IMAGE_DIR, "ottava-amphora-configure");
const VRRP_MASTER = join(IMAGE_DIR, "ottava-vrrp-master");
const SERVER_PEM =
  "-----BEGIN CERTIFICATE-----\nTHE-AGENT-CERTIFICATE\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nTHE-AGENT-KEY\n-----END PRIVATE KEY-----\n";
const AGENT_CONF = "[health_manager]\nheartbeat_key = THE-HEARTBEAT-KEY\n";

for (const need of ["/usr/bin/python3", "/usr/bin/unshare"]) {
  if (!existsSync(need)) throw new Error(`packages/aws/test/image-scripts.test.ts needs ${need}`);
}
if (spawnSync("/usr/bin/python3", ["-c", "import boto3"]).status !== 0)
  throw new Error("packages/aws/test/image-scripts.test.ts needs Debian's python3-boto3 (.ci/run installs it)");
if (process.getuid?.() !== 0) throw new Error("packages/aws/test/image-scripts.test.ts needs root (a private mount namespace)");

let moto: Moto;
const dirs: string[] = [];

beforeAll(async () => {
  moto = await startMoto();
});

afterAll(async () => {
  await moto?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stderr: string;
  /** What the run left in /etc (the overlay's upper layer), under <dir>/etc. */
  etc: string;
  /** The systemctl command lines it ran. */
  systemctl: string[];
}

/**
 * Runs ottava-amphora-configure as the user data does, with /etc/ottava/amphora.json written first, in a
 * mount namespace of its own whose /etc is an overlay on a tmpfs; a systemctl on PATH records what it is asked.
 */
function configure(amphora: unknown, opts: { during?: () => Promise<void> } = {}): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "ottava-configure-"));
  dirs.push(dir);
  mkdirSync(join(dir, "bin"));
  mkdirSync(join(dir, "etc"));
  mkdirSync(join(dir, "layers"));
  writeFileSync(join(dir, "amphora.json"), JSON.stringify(amphora));
  writeFileSync(join(dir, "bin", "systemctl"), `#!/bin/sh\necho "$*" >> ${dir}/systemctl.log\n`);
  chmodSync(join(dir, "bin", "systemctl"), 0o755);
  const script = `set -eu
dir=$1; shift
mount -t tmpfs ottava-configure "$dir/layers"
mkdir "$dir/layers/up" "$dir/layers/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/layers/up,workdir=$dir/layers/work" /etc
mkdir -p /etc/ottava
cp "$dir/amphora.json" /etc/ottava/amphora.json
status=0
"$@" || status=$?
rm -rf "$dir/layers/up/ottava"
cp -a "$dir/layers/up/." "$dir/etc/"
exit $status`;
  const child = spawn(
    "/usr/bin/unshare",
    ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", dir, CONFIGURE, "/etc/ottava/amphora.json"],
    {
      env: {
        PATH: `${dir}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        HOME: dir,
        LANG: "C.UTF-8",
        AWS_ACCESS_KEY_ID: "testing",
        AWS_SECRET_ACCESS_KEY: "testing",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return (async () => {
    await opts.during?.();
    const status = await exited;
    const log = join(dir, "systemctl.log");
    return {
      status,
      stderr,
      etc: join(dir, "etc"),
      systemctl: existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [],
    };
  })();
}

const mode = (path: string) => statSync(path).mode & 0o777;
const amphoraJson = (secretId: string) => ({ region: "us-east-1", secret_id: secretId, secretsmanager_endpoint: moto.endpoint });

describe("the scripts' syntax", () => {
  it("install.sh is POSIX sh, and the Python scripts compile with Debian's python3", () => {
    const sh = spawnSync("/bin/sh", ["-n", join(IMAGE_DIR, "install.sh")], { encoding: "utf8" });
    expect(sh.stderr).toBe("");
    expect(sh.status).toBe(0);
    for (const script of [CONFIGURE, VRRP_MASTER]) {
      const py = spawnSync("/usr/bin/python3", ["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", script], {
        encoding: "utf8",
      });
      expect(py.stderr).toBe("");
      expect(py.status).toBe(0);
      expect(statSync(script).mode & 0o111).toBe(0o111);
      expect(readFileSync(script, "utf8").split("\n")[0]).toBe("#!/usr/bin/python3");
    }
  });

  it("install.sh names only sibling files that exist, and the unit runs the agent as the contract says", () => {
    const install = readFileSync(join(IMAGE_DIR, "install.sh"), "utf8");
    const siblings = [...install.matchAll(/\$here\/([A-Za-z0-9_.-]+)/g)].map((m) => m[1]!);
    expect(new Set(siblings)).toEqual(new Set(["ottava-amphora-configure", "ottava-vrrp-master", "amphora-agent.service"]));
    for (const f of siblings) expect(existsSync(join(IMAGE_DIR, f))).toBe(true);
    const unit = readFileSync(join(IMAGE_DIR, "amphora-agent.service"), "utf8");
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/amphora-agent --config-file \/etc\/octavia\/amphora-agent\.conf$/m);
    expect(readdirSync(IMAGE_DIR).sort()).toEqual([
      "amphora-agent.service",
      "install.sh",
      "ottava-amphora-configure",
      "ottava-vrrp-master",
    ]);
    // Installed where the REST driver's keepalived.conf names it (@ottava/amphora's VRRP_NOTIFY_MASTER_SCRIPT; packages/controller/test/vip-promotion.test.ts checks they agree).
    expect(install).toContain(`install -m 0755 "$here/ottava-vrrp-master" /usr/local/sbin/ottava-vrrp-master\n`);
  });
});

describe("ottava-amphora-configure against moto", () => {
  it("waits for a secret that is not there yet, writes the agent's files 0600, and enables and starts the agent", async () => {
    const id = "ottava/test/amphora/one";
    const run = await configure(amphoraJson(id), {
      // The secret appears after the first tries were answered ResourceNotFoundException.
      during: async () => {
        await new Promise((r) => setTimeout(r, 2500));
        await createMotoSecret(moto.endpoint, id, amphoraSecretString(SERVER_PEM, AGENT_CONF));
      },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/not readable yet \(ResourceNotFoundException, try 1\)/);
    expect(run.stderr).toContain(`read secret ${id} from ${moto.endpoint}`);
    const certs = join(run.etc, "octavia", "certs");
    expect(readFileSync(join(certs, "server.pem"), "utf8")).toBe(SERVER_PEM);
    expect(readFileSync(join(run.etc, "octavia", "amphora-agent.conf"), "utf8")).toBe(AGENT_CONF);
    expect(mode(join(certs, "server.pem"))).toBe(0o600);
    expect(mode(join(run.etc, "octavia", "amphora-agent.conf"))).toBe(0o600);
    expect(mode(certs)).toBe(0o700);
    // Written atomically: no temporary file left beside them.
    expect(readdirSync(certs)).toEqual(["server.pem"]);
    expect(readdirSync(join(run.etc, "octavia")).sort()).toEqual(["amphora-agent.conf", "certs"]);
    expect(run.systemctl).toEqual(["enable --now amphora-agent"]);
    for (const secret of ["THE-AGENT-KEY", "THE-AGENT-CERTIFICATE", "THE-HEARTBEAT-KEY"]) expect(run.stderr).not.toContain(secret);
  }, 30_000);

  it("stops on a secret that is not the contract's JSON, naming no content, and starts nothing", async () => {
    const id = "ottava/test/amphora/bad";
    await createMotoSecret(moto.endpoint, id, "THE-AGENT-KEY is not JSON");
    const run = await configure(amphoraJson(id));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`secret ${id} is not a JSON object`);
    expect(run.stderr).not.toContain("THE-AGENT-KEY");
    expect(existsSync(join(run.etc, "octavia"))).toBe(false);
    expect(run.systemctl).toEqual([]);

    const partial = "ottava/test/amphora/partial";
    await createMotoSecret(moto.endpoint, partial, JSON.stringify({ server_pem: SERVER_PEM }));
    const second = await configure(amphoraJson(partial));
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`secret ${partial} has no agent_conf`);
    expect(second.stderr).not.toContain("THE-AGENT-KEY");
    expect(second.systemctl).toEqual([]);
  }, 30_000);

  it("stops on an amphora.json without a secret id", async () => {
    const run = await configure({ region: "us-east-1", secretsmanager_endpoint: null });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("/etc/ottava/amphora.json has no secret_id");
    expect(run.systemctl).toEqual([]);
  });
});

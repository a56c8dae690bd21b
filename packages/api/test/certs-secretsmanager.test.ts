// The API with OTTAVA_CERT_MANAGER=secretsmanager against moto (issue 24): what an operator stores with
// `npm run cert -- store --project` (a child process, its settings in the environment) the API accepts in a
// TERMINATED_HTTPS listener of that project's LB, which then goes ACTIVE with the no-op amphora driver;
// another project's LB naming the same ARN, and a name no secret has, are refused with Octavia's
// "Could not retrieve certificate: ['<ref>']". A CA stored with `store-secret` is a pool's ca_tls_container_ref.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MOTO_CLIENT, awsCallsMissingFromRecord, recordedAwsCalls, runCertCommand, startMoto, type Moto } from "@ottava/aws/testing";
import { activeLb, fault, inProcessApp, pick, PROJECT, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
const STAGE = "apicerts";
const OTHER = "9f8e7d6c5b4a49382716a5b4c3d2e1f0";
const LISTENERS = "/v2/lbaas/listeners";
let moto: Moto;
let t: App;
let dir: string;
const f = (name: string) => join(dir, name);
const refused = (ref: string) => fault(400, `Could not retrieve certificate: ['${ref}']`);

/** `npm run cert -- <args>` as an operator runs it: the ARN it prints. */
function cert(...args: string[]): string {
  const run = runCertCommand(moto, STAGE, ...args);
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

/** An LB of `project`, ACTIVE (created through the API, the no-op drivers). */
async function lbOf(project: string): Promise<string> {
  if (project === PROJECT) return (await activeLb(t)).id;
  const res = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } }, { "x-project-id": project });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.loadbalancer.project_id).toBe(project);
  await t.settle();
  return res.body.loadbalancer.id;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ottava-api-sm-certs-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Test CA", "-days", "2");
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=www.example.com");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2");
  moto = await startMoto();
  // Its Secrets Manager calls, by workload, for the IAM record (recordedAwsCalls).
  await moto.record();
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  t = await inProcessApp({
    OTTAVA_CERT_MANAGER: "secretsmanager",
    OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
    OTTAVA_STAGE: STAGE,
  });
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  await moto?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("OTTAVA_CERT_MANAGER=secretsmanager through the API", () => {
  let arn: string;

  it("a certificate stored with `npm run cert -- store --project` is accepted for the project's listener, which goes ACTIVE", async () => {
    arn = cert("store", "--project", PROJECT, "--cert", f("server.pem"), "--key", f("server.key"), "--intermediates", f("ca.pem"));
    expect(arn).toMatch(new RegExp(`^arn:aws:secretsmanager:${MOTO_CLIENT.region}:\\d{12}:secret:ottava/${STAGE}/certificates/`));
    const lbId = await lbOf(PROJECT);
    const res = await t.call("POST", LISTENERS, {
      listener: {
        loadbalancer_id: lbId,
        protocol: "TERMINATED_HTTPS",
        protocol_port: 443,
        default_tls_container_ref: arn,
        sni_container_refs: [arn],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.listener).toMatchObject({
      default_tls_container_ref: arn,
      sni_container_refs: [arn],
      provisioning_status: "PENDING_CREATE",
    });
    await t.settle();
    const listener = await t.call("GET", `${LISTENERS}/${res.body.listener.id}`);
    expect(listener.body.listener).toMatchObject({ provisioning_status: "ACTIVE", default_tls_container_ref: arn });
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
  });

  it("the same ARN from another project's LB is refused with Octavia's message, and nothing is written", async () => {
    const lbId = await lbOf(OTHER);
    const res = await t.call(
      "POST",
      LISTENERS,
      { listener: { loadbalancer_id: lbId, protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: arn } },
      { "x-project-id": OTHER },
    );
    expect(pick(res)).toEqual(refused(arn));
    expect((await t.call("GET", `${LISTENERS}?loadbalancer_id=${lbId}`, undefined, { "x-project-id": OTHER })).body.listeners).toEqual([]);
  });

  it("a name no secret has is refused with Octavia's message", async () => {
    const lbId = await lbOf(PROJECT);
    for (const ref of [`ottava/${STAGE}/certificates/00000000-0000-4000-8000-000000000000`, "no-such-secret"]) {
      const res = await t.call("POST", LISTENERS, {
        listener: { loadbalancer_id: lbId, protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: ref },
      });
      expect(pick(res)).toEqual(refused(ref));
    }
  });

  it("a CA stored with `npm run cert -- store-secret --project` is accepted as the project's pool's ca_tls_container_ref", async () => {
    const ca = cert("store-secret", "--project", PROJECT, "--file", f("ca.pem"));
    const lbId = await lbOf(PROJECT);
    const pool = (ref: string, project = PROJECT, lb = lbId) =>
      t.call(
        "POST",
        "/v2/lbaas/pools",
        { pool: { loadbalancer_id: lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", tls_enabled: true, ca_tls_container_ref: ref } },
        { "x-project-id": project },
      );
    const res = await pool(ca);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.pool).toMatchObject({ ca_tls_container_ref: ca, tls_enabled: true });
    await t.settle();
    expect((await t.call("GET", `/v2/lbaas/pools/${res.body.pool.id}`)).body.pool.provisioning_status).toBe("ACTIVE");
    // Another project's LB may not name it.
    expect(pick(await pool(ca, OTHER, await lbOf(OTHER)))).toEqual(refused(ca));
  });
});

it("called only the EC2 and Secrets Manager actions the IAM record holds for each workload (test/fixtures/aws-calls.json)", async () => {
  await t.settle();
  expect(awsCallsMissingFromRecord(await recordedAwsCalls({ moto }))).toEqual([]);
});

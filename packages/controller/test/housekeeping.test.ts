// Housekeeping over DynamoDB Local and the real ASL (local runner): amphora certificates issued at
// build time by the CA of the settings, their rotation (amphora-cert-rotate) inside cert_expiry_buffer,
// and the purge of DELETED load balancers and amphorae at exactly their expiry age (a fake clock).
import { X509Certificate, createPrivateKey, createPublicKey } from "node:crypto";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, createDeps } from "@ottava/api";
import type { Amphora, CaMaterial } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoHousekeepingStore, DynamoRepairStore, createClients, pointerKey } from "@ottava/db";
import { noopServerPem } from "@ottava/amphora";
import { noopDriversWith } from "@ottava/amphora/testing";
import {
  CA_TASKS,
  FLOW_TASKS,
  Housekeeping,
  TASKS,
  createLocalCa,
  createTaskContext,
  purge,
  rotateCerts,
  type HousekeepingJobDeps,
} from "@ottava/controller";
import { LocalWorkflowEngine } from "@ottava/local/runner";
import { activeLb, freshTable, PROJECT } from "@ottava/db/testing";
import { captureOutput } from "@ottava/edge/testing";

const VALIDITY = 63_072_000; // the default cert_validity_time
const DAY = 86_400_000;
let ca: CaMaterial;

/**
 * The app in process, as @ottava/local/testing (packages/local/test/support/app.ts) builds it, with every log line (debug and up) kept
 * until the test ends; `noopFaults`: its no-op drivers' injected faults (OTTAVA_NOOP_FAULTS).
 */
async function app(env: Record<string, string> = {}, noopFaults?: string) {
  const { config, ...stores } = await freshTable({ OTTAVA_CA_CERTIFICATE: ca.certificate, OTTAVA_CA_PRIVATE_KEY: ca.privateKey, ...env });
  const lines = captureOutput();
  const log = createLogger({ service: "test" }, "debug");
  const { store, trail, catalog } = stores;
  const tasks = { ...createTaskContext(config, stores, { noop: noopFaults ? noopDriversWith(noopFaults) : undefined }), log };
  const engine = new LocalWorkflowEngine(tasks, log, config.flowConcurrency);
  const api = await createApp(createDeps(config, { stores, engine, drivers: tasks.drivers, log }));
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await api.request(path, {
      method,
      headers: { "content-type": "application/json", "x-project-id": PROJECT },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const { doc } = createClients(config.dynamodbEndpoint);
  const housekeeping = new DynamoHousekeepingStore(doc, config.tableName);
  const deps: HousekeepingJobDeps = {
    housekeeping,
    store,
    trail,
    catalog,
    pending: new DynamoRepairStore(doc, config.tableName),
    engine,
    log,
    metrics,
    config,
  };
  return { config, store, engine, call, doc, housekeeping, deps, lines, settle: () => engine.drain() };
}
type App = Awaited<ReturnType<typeof app>>;

/** The certificate the driver last received for an amphora: it verifies against the CA, names the amphora, and carries its key. */
function checkServerPem(amphoraId: string, expiration: string | null) {
  const pem = noopServerPem(amphoraId);
  expect(pem).toBeDefined();
  const cert = new X509Certificate(pem!);
  expect(cert.verify(new X509Certificate(ca.certificate).publicKey)).toBe(true);
  expect(cert.checkIssued(new X509Certificate(ca.certificate))).toBe(true);
  expect(cert.subject).toBe(`CN=${amphoraId}`);
  expect(cert.subjectAltName).toBe(`DNS:${amphoraId}`);
  expect(cert.ca).toBe(false);
  expect(new Date(cert.validTo).toISOString()).toBe(expiration);
  const key = createPrivateKey(pem!);
  expect(
    createPublicKey(key)
      .export({ type: "spki", format: "der" })
      .equals(cert.publicKey.export({ type: "spki", format: "der" })),
  ).toBe(true);
  return pem!;
}

/**
 * Every task's input and output, i.e. every state an execution's history would record (TASKS wrapped once,
 * in beforeAll; the registry is the worker's, shared with the files it runs next: put back in afterAll).
 */
const states: string[] = [];
const originalTasks = { ...TASKS };
afterAll(() => void Object.assign(TASKS, originalTasks));
function recordTaskStates() {
  for (const [name, handler] of Object.entries(TASKS)) {
    TASKS[name] = async (input, ctx) => {
      const output = await handler(input, ctx);
      states.push(JSON.stringify({ name, input, output }));
      return output;
    };
  }
}

/** No log line and no execution's state carries a private key or a certificate. */
function noSecretsLeaked(t: App) {
  expect(states.length).toBeGreaterThan(0);
  for (const state of states) expect(state).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE/);
  for (const line of t.lines) expect(line).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE/);
}

const setCertExpiration = (t: App, a: Amphora, at: Date) =>
  t.store.updateAmphoraIf(a.loadbalancer_id, a.id, ["ALLOCATED"], { cert_expiration: at.toISOString() });
const amphora = async (t: App, a: Amphora) => (await t.store.getAmphora(a.id)) as Amphora & { cert_rotation?: string };

beforeAll(async () => {
  ca = await createLocalCa();
  recordTaskStates();
});

describe("amphora certificates", () => {
  it("are signed only by the task functions that get the CA on AWS", () => {
    for (const task of CA_TASKS) expect(FLOW_TASKS).toContain(task);
  });

  it("an amphora build issues a server certificate signed by the CA (CN = the amphora id) and records its expiry", async () => {
    const t = await app();
    const before = Math.floor(Date.now() / 1000) * 1000;
    const { amphora: a } = await activeLb(t);
    const after = Date.now();
    expect(a.cert_busy).toBe(false);
    const expires = Date.parse(a.cert_expiration!);
    expect(expires).toBeGreaterThanOrEqual(before + VALIDITY * 1000);
    expect(expires).toBeLessThanOrEqual(after + VALIDITY * 1000);
    checkServerPem(a.id, a.cert_expiration);
    const shown = await t.call("GET", `/v2/octavia/amphorae/${a.id}`);
    expect(shown.body.amphora).toMatchObject({ cert_busy: false, cert_expiration: a.cert_expiration!.slice(0, 19) });
    noSecretsLeaked(t);
  });

  it("rotates a certificate inside cert_expiry_buffer, not one outside it, and records the new expiry", async () => {
    const t = await app();
    const due = await activeLb(t);
    const fine = await activeLb(t);
    const firstPem = noopServerPem(due.amphora.id);
    const soon = new Date(Date.now() + DAY); // inside the 14-day buffer
    await setCertExpiration(t, due.amphora, soon);
    const unchanged = (await amphora(t, fine.amphora)).cert_expiration;

    const now = new Date();
    const result = await rotateCerts(t.deps, now);
    expect(result.started).toEqual([due.amphora.id]);
    // Claimed: a second pass meanwhile starts nothing (busy, or already rotated).
    expect((await rotateCerts(t.deps, now)).started).toEqual([]);
    await t.settle();

    const rotated = await amphora(t, due.amphora);
    expect(rotated.cert_busy).toBe(false);
    expect(rotated.cert_rotation).toBeUndefined();
    expect(Date.parse(rotated.cert_expiration!)).toBeGreaterThanOrEqual(Math.floor(now.getTime() / 1000) * 1000 + VALIDITY * 1000);
    expect(checkServerPem(due.amphora.id, rotated.cert_expiration)).not.toBe(firstPem);
    expect((await amphora(t, fine.amphora)).cert_expiration).toBe(unchanged);
    // Nothing is due any more.
    expect((await rotateCerts(t.deps, new Date())).started).toEqual([]);
    // The other one is due once its expiry is less than cert_expiry_buffer away: not at exactly that, a millisecond after.
    const boundary = Date.parse(unchanged!) - 1_209_600 * 1000;
    expect((await rotateCerts(t.deps, new Date(boundary))).started).not.toContain(fine.amphora.id);
    await t.settle();
    const finePem = noopServerPem(fine.amphora.id);
    const rotatedAt = Date.now();
    expect((await rotateCerts(t.deps, new Date(boundary + 1))).started).toContain(fine.amphora.id);
    await t.settle();
    // A new certificate, valid from the rotation (X.509 times are whole seconds: it may end in the same second as the old one).
    const renewed = (await amphora(t, fine.amphora)).cert_expiration!;
    expect(Date.parse(renewed)).toBeGreaterThanOrEqual(Math.floor(rotatedAt / 1000) * 1000 + VALIDITY * 1000);
    expect(noopServerPem(fine.amphora.id)).not.toBe(finePem);
    noSecretsLeaked(t);
  });

  it("a failing upload (OTTAVA_NOOP_FAULTS=amphora.uploadCert) leaves the old expiry and clears cert_busy", async () => {
    const t = await app({}, "amphora.uploadCert");
    const { amphora: a } = await activeLb(t);
    const soon = new Date(Date.now() + DAY);
    await setCertExpiration(t, a, soon);
    const buildPem = noopServerPem(a.id);
    expect((await rotateCerts(t.deps, new Date())).started).toEqual([a.id]);
    await t.settle(); // the upload is tried three times (1 s, then 2 s later), then the flow fails
    const after = await amphora(t, a);
    expect(after.cert_expiration).toBe(soon.toISOString());
    expect(after.cert_busy).toBe(false);
    expect(after.cert_rotation).toBeUndefined();
    expect(noopServerPem(a.id)).toBe(buildPem);
    // It failed where it should have: the upload (its driver error, after the retries).
    expect(
      t.lines.some(
        (l) => l.includes("amphora certificate rotation failed") && l.includes(a.id) && l.includes("Injected fault: amphora.uploadCert"),
      ),
    ).toBe(true);
    expect(t.lines.filter((l) => l.includes('"task":"uploadAmphoraCert"') && l.includes("task failed"))).toHaveLength(3);
    // Still due: the next pass tries again.
    expect((await rotateCerts(t.deps, new Date())).started).toEqual([a.id]);
    await t.settle();
    noSecretsLeaked(t);
  });

  it("takes over a claim left behind longer than the stale age, not a recent one", async () => {
    const t = await app();
    const { amphora: a } = await activeLb(t);
    await setCertExpiration(t, a, new Date(Date.now() + DAY));
    const now = new Date();
    await t.housekeeping.claimCertRotation(a.loadbalancer_id, a.id, "ghost", new Date(now.getTime() - 60_000).toISOString());
    expect((await rotateCerts(t.deps, now)).started).toEqual([]);
    await t.housekeeping.claimCertRotation(a.loadbalancer_id, a.id, "ghost", new Date(now.getTime() - 3 * 3600_000).toISOString());
    expect((await rotateCerts(t.deps, now)).started).toEqual([a.id]);
    await t.settle();
    expect(await amphora(t, a)).toMatchObject({ cert_busy: false });
    expect(Date.parse((await amphora(t, a)).cert_expiration!)).toBeGreaterThan(Date.now() + DAY * 365);
  });
});

describe("purge", () => {
  const LB_AGE = 3600;
  const AMP_AGE = 600;

  it("purges DELETED load balancers and amphorae older than their expiry age, not a millisecond before, and nothing live", async () => {
    const t = await app({ OTTAVA_LOAD_BALANCER_EXPIRY_AGE: String(LB_AGE), OTTAVA_AMPHORA_EXPIRY_AGE: String(AMP_AGE) });
    const gone = await activeLb(t);
    const listener = await t.call("POST", "/v2/lbaas/listeners", {
      listener: { loadbalancer_id: gone.id, protocol: "HTTP", protocol_port: 80 },
    });
    expect(listener.status).toBe(201);
    await t.settle();
    const live = await activeLb(t);
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${gone.id}?cascade=true`)).status).toBe(204);
    await t.settle();
    expect((await t.call("PUT", `/v2/lbaas/loadbalancers/${live.id}/failover`)).status).toBe(202);
    await t.settle();
    const replacement = (await t.store.amphoraeOf(live.id)).find((a) => a.status === "ALLOCATED")!;
    expect(replacement.id).not.toBe(live.amphora.id);

    const far = new Date(Date.now() + 365 * DAY).toISOString();
    const deletedLbs = [];
    for await (const d of t.housekeeping.deletedLoadBalancers(far)) deletedLbs.push(d);
    const deletedAmps = [];
    for await (const d of t.housekeeping.deletedAmphorae(far)) deletedAmps.push(d);
    expect(deletedLbs.map((d) => d.id)).toEqual([gone.id]);
    expect(deletedAmps.map((d) => d.id).sort()).toEqual([gone.amphora.id, live.amphora.id].sort());
    const lbDeletedAt = Date.parse(deletedLbs[0]!.deletedAt);
    const failedOverAt = Date.parse(deletedAmps.find((d) => d.id === live.amphora.id)!.deletedAt);
    const goneAmpAt = Date.parse(deletedAmps.find((d) => d.id === gone.amphora.id)!.deletedAt);
    expect(goneAmpAt).toBeLessThan(failedOverAt);

    const item = async (pk: string, sk: string) =>
      (await t.doc.send(new GetCommand({ TableName: t.config.tableName, Key: { pk, sk }, ConsistentRead: true }))).Item;
    const partition = async (lbId: string) =>
      (
        await t.doc.send(
          new QueryCommand({
            TableName: t.config.tableName,
            KeyConditionExpression: "pk = :pk",
            ExpressionAttributeValues: { ":pk": `LB#${lbId}` },
            ConsistentRead: true,
          }),
        )
      ).Items ?? [];
    const ampItem = (a: Amphora) => item(`LB#${a.loadbalancer_id}`, `AMP#${a.id}`);

    // Exactly amphora_expiry_age after the failover: the failed-over amphora is not older than the age yet.
    expect(await purge(t.deps, new Date(failedOverAt + AMP_AGE * 1000))).toEqual({ loadBalancers: 0, amphorae: 1 });
    expect(await ampItem(gone.amphora)).toBeUndefined(); // deleted earlier (with its LB): old enough
    expect(await ampItem(live.amphora)).toBeDefined();
    expect(await item(pointerKey(live.amphora.id).pk, "ID")).toBeDefined();
    // A millisecond later it is.
    expect(await purge(t.deps, new Date(failedOverAt + AMP_AGE * 1000 + 1))).toEqual({ loadBalancers: 0, amphorae: 1 });
    expect(await ampItem(live.amphora)).toBeUndefined();
    expect(await item(pointerKey(live.amphora.id).pk, "ID")).toBeUndefined();

    // The load balancer: kept at exactly load_balancer_expiry_age, its whole partition purged just after.
    expect((await partition(gone.id)).length).toBeGreaterThan(1);
    expect(await purge(t.deps, new Date(lbDeletedAt + LB_AGE * 1000))).toEqual({ loadBalancers: 0, amphorae: 0 });
    expect(await item(`LB#${gone.id}`, "LB")).toBeDefined();
    expect(await purge(t.deps, new Date(lbDeletedAt + LB_AGE * 1000 + 1))).toEqual({ loadBalancers: 1, amphorae: 0 });
    expect(await partition(gone.id)).toEqual([]);
    expect(await item(pointerKey(listener.body.listener.id).pk, "ID")).toBeUndefined();
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${gone.id}`)).status).toBe(404);

    // The live load balancer, its listener-less tree and its new amphora are untouched, even far ahead.
    expect(await purge(t.deps, new Date(Date.now() + 365 * DAY))).toEqual({ loadBalancers: 0, amphorae: 0 });
    expect((await t.store.getLoadBalancer(live.id))?.record.provisioning_status).toBe("ACTIVE");
    expect((await t.store.getAmphora(replacement.id))?.status).toBe("ALLOCATED");
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${live.id}`)).status).toBe(200);
  });

  it("Housekeeping runs both jobs at start, then on its timers, and stops", async () => {
    const t = await app({ OTTAVA_AMPHORA_EXPIRY_AGE: "0" });
    const { id: lbId, amphora: a } = await activeLb(t);
    expect((await t.call("PUT", `/v2/lbaas/loadbalancers/${lbId}/failover`)).status).toBe(202);
    await t.settle();
    const hk = new Housekeeping(t.deps, { cleanupInterval: 3600, certInterval: 3600, now: () => new Date(Date.now() + 1000) });
    hk.start();
    for (let i = 0; i < 100 && (await t.store.getAmphora(a.id)); i++) await new Promise((r) => setTimeout(r, 20));
    await hk.stop();
    expect(await t.store.getAmphora(a.id)).toBeUndefined();
    expect(t.lines.some((l) => l.includes("housekeeping purge"))).toBe(true);
  });
});

// The health check over DynamoDB Local and the real amphora-failover flow (local runner): stale
// amphorae are failed over, one flow per LB; silent amphorae are not watched; a storm stops
// failovers (an alert, and the AmphoraFailovers and FailoverStormStops metrics); nothing happens
// before the lease has been held for heartbeat_timeout.
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { Amphora } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoHealthCheckStore, createClients, heartbeatAttributes, pointerKey } from "@ottava/db";
import { HealthChecker } from "@ottava/controller";
import { activeLb, inProcessApp } from "@ottava/local/testing";
import { captureMetrics, captureOutput } from "@ottava/edge/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
const TIMEOUT = 60;

/** What the heartbeat receiver writes when it hears an amphora at `at`. */
async function heard(app: App, amphora: Amphora, at: Date) {
  const { doc } = createClients(app.config.dynamodbEndpoint);
  const ref = await doc.send(
    new (await import("@aws-sdk/lib-dynamodb")).GetCommand({ TableName: app.config.tableName, Key: pointerKey(amphora.id) }),
  );
  const attrs = heartbeatAttributes(amphora.id, at.toISOString());
  const names = Object.keys(attrs);
  await doc.send(
    new UpdateCommand({
      TableName: app.config.tableName,
      Key: { pk: ref.Item!.ref_pk, sk: ref.Item!.ref_sk },
      UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :a${i}`).join(", ")}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])),
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:a${i}`, (attrs as Record<string, unknown>)[n]])),
    }),
  );
}

/** A checker logging at info; what it logs is kept out of the test output (captured until the test ends). */
function checker(app: App, opts: { threshold?: number; onError?: boolean; clock: { now: Date } }) {
  captureOutput();
  const log = createLogger({ service: "test" }, "info");
  const checks = new DynamoHealthCheckStore(createClients(app.config.dynamodbEndpoint).doc, app.config.tableName);
  return new HealthChecker(
    { store: app.store, trail: app.trail, catalog: app.catalog, engine: app.engine, log, metrics, checks },
    {
      heartbeatTimeout: TIMEOUT,
      failoverThreshold: opts.threshold,
      failoverOnError: opts.onError ?? false,
      interval: 1,
      now: () => opts.clock.now,
    },
  );
}

const later = (clock: { now: Date }, seconds: number) => (clock.now = new Date(clock.now.getTime() + seconds * 1000));
const status = async (app: App, a: Amphora) => (await app.store.getAmphora(a.id))?.status;

beforeAll(async () => {
  t = await inProcessApp();
});

describe("health check", () => {
  it("fails over a stale amphora after holding the lease for heartbeat_timeout, and leaves silent ones alone", async () => {
    const clock = { now: new Date() };
    const stale = await activeLb(t);
    const silent = await activeLb(t);
    await heard(t, stale.amphora, new Date(clock.now.getTime() - 2 * TIMEOUT * 1000));
    const hc = checker(t, { clock });

    // Just started: it takes the lease and waits, whatever it sees.
    expect(await hc.tick()).toBeUndefined();
    later(clock, TIMEOUT / 2);
    expect(await hc.tick()).toBeUndefined();
    // Another checker cannot take the lease meanwhile.
    expect(await checker(t, { clock }).tick()).toBeUndefined();

    later(clock, TIMEOUT / 2 + 1);
    const result = await hc.tick();
    expect(result).toMatchObject({ stale: 1, failedOver: [stale.amphora.id], stopped: [] });
    // The LB is locked by the failover: the next pass skips it rather than starting a second flow.
    const again = await hc.tick();
    expect(again?.failedOver ?? []).toEqual([]);
    await t.settle();
    expect(await status(t, stale.amphora)).toBe("DELETED");
    const replacement = (await t.store.amphoraeOf(stale.id)).find((a) => a.status === "ALLOCATED");
    expect(replacement?.id).not.toBe(stale.amphora.id);
    expect((await t.store.getLoadBalancer(stale.id))?.record.provisioning_status).toBe("ACTIVE");
    // Never heard: never failed over.
    expect(await status(t, silent.amphora)).toBe("ALLOCATED");
    // The replacement has not spoken yet: the next pass finds nothing stale.
    expect((await hc.tick())?.stale).toBe(0);
  });

  it("stops failovers at failover_threshold, alerts, and puts heard-again amphorae back in service", async () => {
    const app = await inProcessApp();
    const clock = { now: new Date() };
    const out = captureMetrics();
    const lbs = [await activeLb(app), await activeLb(app)];
    for (const lb of lbs) await heard(app, lb.amphora, new Date(clock.now.getTime() - 2 * TIMEOUT * 1000));
    const hc = checker(app, { threshold: 2, clock });
    await hc.tick();
    later(clock, TIMEOUT + 1);
    const result = await hc.tick();
    expect(result).toMatchObject({ stale: 2, failedOver: [] });
    expect(result!.stopped.sort()).toEqual(lbs.map((l) => l.amphora.id).sort());
    for (const lb of lbs) expect(await status(app, lb.amphora)).toBe("FAILOVER_STOPPED");
    expect(out.lines.some((l) => l.includes('"alert":"amphora.failover.threshold"') && l.includes('"level":"ERROR"'))).toBe(true);
    expect(out.emitted("FailoverStormStops").map((m) => m.FailoverStormStops)).toEqual([2]);
    expect(out.emitted("AmphoraFailovers")).toEqual([]);
    for (const lb of lbs) expect((await app.store.getLoadBalancer(lb.id))?.record.provisioning_status).toBe("ACTIVE");

    // One of them speaks again: back to ALLOCATED (found by the status scan, once per heartbeat_timeout);
    // the other, alone now under the threshold, is failed over.
    later(clock, TIMEOUT);
    await heard(app, lbs[0]!.amphora, clock.now);
    const next = await hc.tick();
    expect(next?.recovered).toEqual([lbs[0]!.amphora.id]);
    expect(next?.failedOver).toEqual([lbs[1]!.amphora.id]);
    expect(out.emitted("AmphoraFailovers").map((m) => m.AmphoraFailovers)).toEqual([1]);
    await app.settle();
    expect(await status(app, lbs[0]!.amphora)).toBe("ALLOCATED");
    expect(await status(app, lbs[1]!.amphora)).toBe("DELETED");
  });

  it("fails over amphorae in ERROR only with failover_on_error", async () => {
    const errorTeam = await inProcessApp();
    const clock = { now: new Date() };
    const { id: lbId, amphora } = await activeLb(errorTeam);
    await errorTeam.store.updateAmphoraIf(lbId, amphora.id, ["ALLOCATED"], { status: "ERROR" });
    const off = checker(errorTeam, { clock });
    await off.tick();
    later(clock, TIMEOUT + 1);
    expect((await off.tick())?.failedOver).toEqual([]);

    const on = checker(errorTeam, { clock, onError: true });
    later(clock, 3 * 1 + 1); // the first checker's lease (3 intervals) has run out
    await on.tick();
    later(clock, TIMEOUT + 1);
    expect((await on.tick())?.failedOver).toEqual([amphora.id]);
  });
});

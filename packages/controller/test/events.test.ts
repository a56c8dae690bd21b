// Event notifications against moto's EventBridge: a rule forwards the flows' events from the bus to an
// SQS queue, and the queue receives exactly the expected events, with their payloads, for a create,
// an update, a delete, a resize (start, end), a cancelled resize, a failed resize (start, error and no
// end) and a cross-pool member update; a finishing task replayed after its release sends a duplicate
// with the same message id. One moto, one in-process app (OTTAVA_EVENTBRIDGE_ENDPOINT at moto).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DriverError, eventOf, type Drivers, type Logger, type Metrics } from "@ottava/core";
import { noopDrivers } from "@ottava/amphora";
import { awsJsonClient, type AwsJsonCall } from "@ottava/edge";
import { MOTO_CLIENT, startEventsProxy, startMoto, type EventsProxy, type Moto } from "@ottava/aws/testing";
import { MAX_ENTRY_BYTES, PUT_EVENTS_ATTEMPTS, eventBridgeNotifier } from "@ottava/aws/events";
import { inProcessApp, PROJECT, SUBNET } from "@ottava/local/testing";
import type { TaskDecorator } from "@ottava/local/runner";

type App = Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";
const BUS = "ottava-events-test";
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

let moto: Moto;
let app: App;
let events: AwsJsonCall;
let sqs: AwsJsonCall;
let queueUrl: string;
/** The LB whose update's finishing task is run twice (the second run finds the lock released by its own execution). */
let replayed: string | undefined;
/** PutEvents through the proxy that answers entries failed on demand. */
let proxy: EventsProxy;

// The no-op compute, slowed for one compute flavor (a cancel arrives in time) and failing for another.
const drivers = (): Drivers => {
  const base = noopDrivers();
  return {
    ...base,
    compute: {
      ...base.compute,
      build: async (req) => {
        if (req.computeFlavor === "m1.broken") throw new DriverError("no capacity for m1.broken");
        if (req.computeFlavor === "m1.slow") await new Promise((r) => setTimeout(r, 800));
        return base.compute.build(req);
      },
    },
  };
};

const replay: TaskDecorator = (call, invoke) => async (input) => {
  const lbId = (input as { lbId?: string }).lbId;
  if (call.task === "finishLoadBalancerUpdate" && lbId === replayed) await invoke(input);
  return invoke(input);
};

interface Received {
  source: string;
  "detail-type": string;
  detail: {
    message_id: string;
    event_type: string;
    project_id: string;
    request_id: string | null;
    execution_id: string;
    payload: Record<string, unknown>;
  };
}

/** Every message the queue holds now (moto delivers the rule's targets synchronously with PutEvents). */
async function drain(): Promise<Received[]> {
  const out: Received[] = [];
  for (;;) {
    const r = await sqs("ReceiveMessage", { QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }, "receive");
    const msgs = (r.Messages ?? []) as { Body: string; ReceiptHandle: string }[];
    if (msgs.length === 0) return out;
    for (const m of msgs) {
      out.push(JSON.parse(m.Body) as Received);
      await sqs("DeleteMessage", { QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }, "delete");
    }
  }
}

const ofLb = (all: Received[], lbId: string) => all.filter((e) => e.detail.payload.loadbalancer_id === lbId);
const types = (all: Received[]) => all.map((e) => e["detail-type"]);

async function flavor(name: string, data: Record<string, unknown>) {
  const fp = await app.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name, provider_name: "amphora", flavor_data: JSON.stringify(data) },
  });
  const f = await app.call("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: fp.body.flavorprofile.id, enabled: true } });
  expect(f.status).toBe(201);
  return f.body.flavor.id as string;
}

async function createLb(fields: Record<string, unknown> = {}) {
  const res = await app.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, name: "web", ...fields } });
  expect(res.status).toBe(201);
  await app.settle();
  return { id: res.body.loadbalancer.id as string, requestId: res.headers.get("x-openstack-request-id") };
}

beforeAll(async () => {
  moto = await startMoto();
  // The notifier's client takes the Region and credentials from the environment, as in a Lambda function.
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  const opts = { endpoint: moto.endpoint, ...MOTO_CLIENT, credentials: async () => MOTO_CLIENT.credentials };
  events = awsJsonClient({ signingName: "events", targetPrefix: "AWSEvents", jsonVersion: "1.1" }, opts);
  sqs = awsJsonClient({ signingName: "sqs", targetPrefix: "AmazonSQS", jsonVersion: "1.0" }, opts);
  queueUrl = String((await sqs("CreateQueue", { QueueName: "ottava-events" }, "queue")).QueueUrl);
  const attrs = await sqs("GetQueueAttributes", { QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }, "arn");
  const queueArn = (attrs.Attributes as Record<string, string>).QueueArn;
  await events("CreateEventBus", { Name: BUS }, "bus");
  await events("PutRule", { Name: "all-ottava", EventBusName: BUS, EventPattern: JSON.stringify({ source: ["ottava"] }) }, "rule");
  await events("PutTargets", { Rule: "all-ottava", EventBusName: BUS, Targets: [{ Id: "queue", Arn: queueArn }] }, "targets");
  proxy = await startEventsProxy(moto.endpoint);
  app = await inProcessApp(
    { OTTAVA_EVENTBRIDGE_ENDPOINT: moto.endpoint, OTTAVA_EVENT_BUS_NAME: BUS },
    { drivers: drivers(), retryIntervalMs: 10, decorateTask: replay },
  );
  // The failed resize's handlers log at ERROR, by design: not in this test's output.
  app.tasks.log = silent;
}, 60_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await proxy?.stop();
  await moto?.stop();
});

describe("event notifications on EventBridge", () => {
  it("create, update and delete: Octavia's three events with its payload, once each; a replayed finish sends a duplicate with the same id", async () => {
    const small = await flavor("ev-small", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.small" });
    const { id, requestId } = await createLb({ flavor_id: small, description: "d" });
    const lb = (await app.call("GET", `${LBS}/${id}`)).body.loadbalancer;
    replayed = id;
    const upd = await app.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "renamed" } });
    expect(upd.status).toBe(200);
    await app.settle();
    expect((await app.call("DELETE", `${LBS}/${id}`)).status).toBe(204);
    await app.settle();

    const got = ofLb(await drain(), id);
    expect(types(got)).toEqual([
      "octavia.loadbalancer.create.end",
      "octavia.loadbalancer.update.end",
      "octavia.loadbalancer.update.end",
      "octavia.loadbalancer.delete.end",
    ]);
    const [create, update, again, del] = got as [Received, Received, Received, Received];
    expect(create.source).toBe("ottava");
    // octavia-lib's LoadBalancer.to_dict(): no statuses, listeners, pools, additional_vips or vip_sg_ids.
    const payload = {
      admin_state_up: true,
      description: "d",
      flavor: { loadbalancer_topology: "SINGLE", compute_flavor: "m1.small" },
      loadbalancer_id: id,
      name: "web",
      project_id: PROJECT,
      vip_address: lb.vip_address,
      vip_network_id: lb.vip_network_id,
      vip_port_id: lb.vip_port_id,
      vip_subnet_id: SUBNET,
      vip_qos_policy_id: null,
      availability_zone: null,
    };
    expect(create.detail).toEqual({
      message_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      event_type: "octavia.loadbalancer.create.end",
      project_id: PROJECT,
      request_id: requestId,
      execution_id: `create-${id}`,
      payload,
    });
    // The update's event carries the load balancer as the update left it.
    expect(update.detail.payload).toEqual({ ...payload, name: "renamed" });
    expect(update.detail.request_id).toBe(upd.headers.get("x-openstack-request-id"));
    // EventBridge gives each PutEvents entry its own id and time; the detail is the same, its message id too.
    expect(again.detail).toEqual(update.detail);
    expect(del.detail.payload).toEqual({ ...payload, name: "renamed" });
    expect(new Set(got.map((e) => e.detail.message_id)).size).toBe(3);
  }, 30_000);

  it("resize: a failed one sends start and error, no end; a cancelled one start and cancel; a done one start and end", async () => {
    const slow = await flavor("ev-slow", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.slow" });
    const fast = await flavor("ev-fast", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.small" });
    const broken = await flavor("ev-broken", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.broken" });
    const { id } = await createLb({ flavor_id: fast });
    await drain();
    const resize = (to: string) => app.call("PUT", `${LBS}/${id}/resize`, { new_flavor_id: to });

    // A failed one first: the LB goes to ERROR with its old flavor (a resize from ERROR is accepted).
    expect((await resize(broken)).status).toBe(202);
    await app.settle();
    let got = ofLb(await drain(), id);
    expect(types(got)).toEqual(["octavia.loadbalancer.resize.start", "octavia.loadbalancer.resize.error"]);
    expect(got[1]!.detail.payload).toMatchObject({ old_flavor_id: fast, new_flavor_id: broken, flavor: { compute_flavor: "m1.small" } });
    expect((await app.call("GET", `${LBS}/${id}`)).body.loadbalancer).toMatchObject({ provisioning_status: "ERROR", flavor_id: fast });

    // Cancelled while its new amphora builds (the slow flavor's build).
    expect((await resize(slow)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 200));
    expect((await app.call("DELETE", `${LBS}/${id}/resize`)).status).toBe(202);
    await app.settle();
    got = ofLb(await drain(), id);
    expect(types(got)).toEqual(["octavia.loadbalancer.resize.start", "octavia.loadbalancer.resize.cancel"]);
    expect(got[1]!.detail.payload).toMatchObject({ old_flavor_id: fast, new_flavor_id: slow, flavor: { compute_flavor: "m1.small" } });

    expect((await resize(slow)).status).toBe(202);
    await app.settle();
    got = ofLb(await drain(), id);
    expect(types(got)).toEqual(["octavia.loadbalancer.resize.start", "octavia.loadbalancer.resize.end"]);
    expect(got[0]!.detail.payload).toMatchObject({ old_flavor_id: fast, new_flavor_id: slow, flavor: { compute_flavor: "m1.small" } });
    expect(got[1]!.detail.payload).toMatchObject({ old_flavor_id: fast, new_flavor_id: slow, flavor: { compute_flavor: "m1.slow" } });
    expect(got[0]!.detail.execution_id).toBe(got[1]!.detail.execution_id);
    expect(got[0]!.detail.message_id).not.toBe(got[1]!.detail.message_id);
  }, 30_000);

  it("a cross-pool member update: its end, naming the pools it changed", async () => {
    const { id } = await createLb();
    const pool = async () => {
      const res = await app.call("POST", "/v2/lbaas/pools", {
        pool: { loadbalancer_id: id, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
      });
      expect(res.status).toBe(201);
      await app.settle();
      return res.body.pool.id as string;
    };
    const [p1, p2] = [await pool(), await pool()];
    await drain();
    const res = await app.call("PUT", "/v2/lbaas/pools/members", {
      members: [
        { pool_id: p1, address: "192.0.2.10", protocol_port: 80 },
        { pool_id: p2, address: "192.0.2.11", protocol_port: 80 },
      ],
    });
    expect(res.status).toBe(202);
    await app.settle();
    const got = ofLb(await drain(), id);
    expect(types(got)).toEqual(["octavia.member.cross_pool_update.end"]);
    expect(got[0]!.detail.payload).toMatchObject({ loadbalancer_id: id, name: "web" });
    expect((got[0]!.detail.payload.pool_ids as string[]).sort()).toEqual([p1, p2].sort());
    expect(got[0]!.detail.request_id).toBe(res.headers.get("x-openstack-request-id"));
  }, 30_000);
});

describe("the EventBridge notifier: PutEvents' failed entries", () => {
  const recorded = () => {
    const errors: Record<string, unknown>[] = [];
    const counts: { name: string; value: number | undefined; dimensions: Record<string, string> | undefined }[] = [];
    const log: Logger = { debug() {}, info() {}, warn() {}, error: (_m, x) => void errors.push(x ?? {}), child: () => log };
    const metrics: Metrics = { count: (name, value, dimensions) => void counts.push({ name, value, dimensions }), timing() {} };
    const notifier = eventBridgeNotifier({ eventbridgeEndpoint: proxy.endpoint, eventBusName: BUS }, log, metrics, { retryBaseMs: 1 });
    return { errors, counts, notifier };
  };
  const event = (n: number, payload: Record<string, unknown> = {}) =>
    eventOf("octavia.loadbalancer.update.end", `update-lb-v${n}`, PROJECT, null, { loadbalancer_id: `lb-${n}`, ...payload });

  it("sends again the entries answered with an ErrorCode (200, FailedEntryCount) until each is delivered once", async () => {
    const { errors, counts, notifier } = recorded();
    await drain();
    proxy.putEvents = [];
    proxy.failEntries = 3;
    await notifier.notify([event(1), event(2)]);
    // Both failed, then the first again (the second delivered), then the first delivered.
    expect(proxy.putEvents).toEqual([2, 2, 1]);
    const got = await drain();
    expect(got.map((e) => e.detail.payload.loadbalancer_id).sort()).toEqual(["lb-1", "lb-2"]);
    expect([errors, counts]).toEqual([[], []]);
  });

  it("after its retries logs and counts the event it could not deliver, and never throws", async () => {
    const { errors, counts, notifier } = recorded();
    proxy.putEvents = [];
    proxy.failEntries = 100;
    await expect(notifier.notify([event(3)])).resolves.toBeUndefined();
    proxy.failEntries = 0;
    expect(proxy.putEvents).toEqual(Array(PUT_EVENTS_ATTEMPTS).fill(1));
    expect(await drain()).toEqual([]);
    expect(errors).toEqual([
      expect.objectContaining({
        eventType: "octavia.loadbalancer.update.end",
        messageId: event(3).messageId,
        reason: "InternalFailure: injected by the test's proxy",
      }),
    ]);
    expect(counts).toEqual([{ name: "EventNotificationsFailed", value: 1, dimensions: { eventType: "octavia.loadbalancer.update.end" } }]);
  });

  it("never sends an entry over EventBridge's 256 KB: logged and counted; the others go", async () => {
    const { errors, counts, notifier } = recorded();
    proxy.putEvents = [];
    await notifier.notify([event(4, { description: "x".repeat(MAX_ENTRY_BYTES) }), event(5)]);
    expect(proxy.putEvents).toEqual([1]);
    expect((await drain()).map((e) => e.detail.payload.loadbalancer_id)).toEqual(["lb-5"]);
    expect(errors.map((e) => e.messageId)).toEqual([event(4).messageId]);
    expect(counts.map((c) => c.name)).toEqual(["EventNotificationsFailed"]);
  });
});

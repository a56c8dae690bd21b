// EC2 benchmark (`npm run bench:ec2`): the EC2 calls each flow makes and each flow's time, with
// OTTAVA_COMPUTE_DRIVER=ec2 (the no-op network and amphora drivers), against moto behind the test proxy.
//
// The local stack runs in this process (DynamoDB Local in memory, startRuntime), its EC2 client carrying
// a counting middleware (startRuntime's decorateAwsClient, the benchmarks' seam): each command the
// drivers send is counted once by action at the SDK's initialize step, above its retries; the proxy
// counts the HTTP requests (the same here: nothing is throttled). Anti-affinity is on, so an
// ACTIVE_STANDBY load balancer's flows include its placement group.
//
// Boot is excluded: the emulator answers a new instance `running` at its first describe, so each build's
// compute wait asks once and enters no Wait state; a flow's time runs from the API request until its
// execution ended (seen in process), the flow's own work: the API, DynamoDB Local, the state machine and
// the EC2 calls to the emulator. On AWS add the instances' boot (tens of seconds) to create, failover and
// resize.
//
// The Secrets Manager calls (each amphora's secret) are counted from moto's recorder, by X-Amz-Target;
// the API's own EC2 calls (the flavor's profile checked again at create and resize, over its minimal
// Query client, which no SDK middleware sees) are the proxy's requests beyond the drivers' commands.
//
// For each topology (SINGLE, ACTIVE_STANDBY), --rounds times (default 5): create, amphora failover,
// load balancer failover, resize (to a flavor of another compute_flavor), delete. Figures: EC2 calls by
// action (the same every round: checked), calls per instance launched, each flow's median and slowest
// time, and the median time spent in EC2 calls (timed by the same middleware) with its share of the flow's. The exit code is 1 when a flow did not end as it should, or its calls varied.
//
// Cost: each flow is also counted as bench:api counts its operations (./common.ts, ./cost.ts): the
// DynamoDB units AWS would bill (@ottava/db/testing/metering on every client of the runtime but the
// local runner's journal; the flow's requests under the meter's "flow" scope), the API request's time
// in the server, the flow's Step Functions state transitions and its task invocations with their
// time. Then, per topology, one more round with each new instance `pending` for BOOT_LOOKS describes
// (the test proxy's boot behaviour, OTTAVA_AMP_ACTIVE_WAIT_SEC=1): what each further look of a boot
// wait costs, the difference divided by BOOT_LOOKS. And the heartbeats: HEARTBEATS signed
// heartbeats of each amphora of a load balancer sent to the runtime's receiver, and the DynamoDB units
// each costs. From these and the prices of ./cost.ts it prints what each flow and an hour of a load
// balancer cost on AWS, with the boot times assumed in BOOT (a boot cannot be measured here).
//
//   npm run bench:ec2
//   npm run bench:ec2 -- --rounds 2
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { createSocket } from "node:dgram";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { MeterRow } from "@ottava/db/testing/metering";
import { arg, benchStackSettings, checkLines, countFlows, noFlowUse, pct, sleep, SUBNET, timeServer, type Check } from "./common";
import {
  addCounts,
  cents,
  deployFixedMonthly,
  dollars,
  flowDollars,
  healthManagerMonthly,
  lambdaMemory,
  loadBalancerHourly,
  bootWait,
  noCounts,
  OCTAVIA_SERVERS,
  PRICES,
  serversMonthly,
  type AmphoraShape,
  type FlowCounts,
} from "./cost";

const ROUNDS = Number(arg("rounds") ?? 5);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 50) throw new Error(`--rounds must be an integer in 1..50, got ${arg("rounds")}`);

const FLOWS = ["create", "amphora failover", "LB failover", "resize", "delete"] as const;
type Flow = (typeof FLOWS)[number];
const TOPOLOGIES = ["SINGLE", "ACTIVE_STANDBY"] as const;
type Topology = (typeof TOPOLOGIES)[number];
/** The flows priced (resize is counted, not priced: its new instances are of another type). */
const PRICED: Flow[] = ["create", "amphora failover", "LB failover", "delete"];

/** Describes that show each new instance `pending` in the boot round: further looks of each of its flow's boot waits. */
const BOOT_LOOKS = 3;
/** Heartbeats sent per amphora, after one each that is not counted (the first may change statuses). */
const HEARTBEATS = 10;
const HEARTBEAT_KEY = randomUUID();
/**
 * A boot on AWS, assumed (it cannot be measured here): a baked image's instance is `running` 15 s
 * after RunInstances, and its agent answers 40 s after that (Debian's boot, cloud-init, the
 * configure step reading the secret, the agent's start); the waits look at the defaults' pace
 * (OTTAVA_AMP_ACTIVE_WAIT_SEC 10, OTTAVA_CONNECTION_RETRY_INTERVAL 5).
 */
const BOOT = { runningAfterSec: 15, activeWaitSec: 10, agentAfterSec: 40, retryIntervalSec: 5 };
/**
 * The amphora as priced: docs/configuration.md's example type (OTTAVA_AMP_FLAVOR_ID has no default;
 * the smallest with a network interface for a member VPC, docs/data-plane.md), the 8 GB root volume of
 * Debian 12's AMI (a baked image keeps it) as gp3, and no public IPv4 address (Ottava asks for none).
 */
const AMPHORA_TYPE = "t3.small";
const AMPHORA_VOLUME_GB = 8;
/** Zones of the management subnets: the per-deploy interface endpoints and NAT gateways are per zone. */
const ZONES = 2;

interface Sample {
  ms: number;
  /** Secrets Manager calls by operation (the amphorae's secrets), as moto recorded them. */
  secrets: Record<string, number>;
  /** Of which in EC2 calls. */
  ec2Ms: number;
  calls: Record<string, number>;
  http: number;
  status: string | undefined;
  /** What AWS would bill for (instanceHours left empty: see the cost report). */
  counts: FlowCounts;
}

const fixed = (x: number) => (Math.abs(x - Math.round(x)) < 0.05 ? String(Math.round(x)) : x.toFixed(1));

/** The mean of the samples' counts. */
function meanCounts(list: Sample[]): FlowCounts {
  return list.reduce((t, s) => addCounts(t, s.counts, 1 / list.length), noCounts());
}

/** DynamoDB units AWS would bill, summed over the meter's rows. */
const unitsOf = (rows: MeterRow[]) => ({
  readUnits: rows.reduce((t, r) => t + r.counts.computedRead, 0),
  writeUnits: rows.reduce((t, r) => t + r.counts.computedWrite, 0),
  requests: rows.reduce((t, r) => t + r.counts.requests, 0),
});

async function main() {
  process.env.POWERTOOLS_METRICS_DISABLED = "true";
  // Imported here: the environment above is set before the packages load.
  const [
    { EC2Client },
    { loadConfig, wrapEnvelope },
    { startDynamoDbLocal, startRuntime },
    aws,
    { createLocalCa },
    { DynamoMeter, addMetering },
  ] = await Promise.all([
    import("@aws-sdk/client-ec2"),
    import("@ottava/core"),
    import("@ottava/local"),
    import("@ottava/aws/testing"),
    import("@ottava/controller"),
    import("@ottava/db/testing/metering"),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), "ottava-bench-ec2-"));
  const [moto, dynamo] = await Promise.all([aws.startMoto(), startDynamoDbLocal({ inMemory: true, dataDir })]);
  const proxy = await aws.startEc2Proxy(moto.endpoint);
  const setup = new EC2Client({ ...aws.MOTO_CLIENT, endpoint: moto.endpoint });
  const fx = await aws.ec2Fixture(setup);
  await fx.taggedImage("amphora", "amphora");
  setup.destroy();
  // The driver's client takes the Region and credentials from the environment, as in a Lambda function.
  process.env.AWS_REGION = aws.MOTO_CLIENT.region;
  process.env.AWS_ACCESS_KEY_ID = aws.MOTO_CLIENT.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = aws.MOTO_CLIENT.credentials.secretAccessKey;

  const counts: Record<string, number> = {};
  /** Milliseconds spent in EC2 commands (the SDK's retries included), since the flow began. */
  const inEc2 = { ms: 0 };
  // The CA the amphorae's certificates are signed with, whose certificate their user data carries.
  const ca = await createLocalCa();
  const config = loadConfig({
    ...benchStackSettings(dynamo.endpoint),
    OTTAVA_CA_CERTIFICATE: ca.certificate,
    OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
    OTTAVA_COMPUTE_DRIVER: "ec2",
    OTTAVA_EC2_ENDPOINT: proxy.endpoint,
    OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
    OTTAVA_STAGE: "bench",
    OTTAVA_AMP_IMAGE_TAG: "amphora",
    OTTAVA_AMP_FLAVOR_ID: "t3.micro",
    OTTAVA_AMP_BOOT_NETWORK_LIST: `${fx.subnets["us-east-1a"]},${fx.subnets["us-east-1b"]}`,
    OTTAVA_AMP_SECGROUP_LIST: fx.securityGroup,
    OTTAVA_ENABLE_ANTI_AFFINITY: "true",
    // The boot round's waits (no other flow waits: moto's instances run at once).
    OTTAVA_AMP_ACTIVE_WAIT_SEC: "1",
    OTTAVA_HEARTBEAT_KEY: HEARTBEAT_KEY,
  });
  // Every DynamoDB client of the runtime but its journal's carries the meter (as in bench:api).
  const meter = new DynamoMeter();
  const flows = await countFlows();
  const serverTimes = timeServer();
  const runtime = await startRuntime({
    config,
    inMemory: true,
    dataDir,
    decorateClient: (client: DynamoDBClient) => addMetering(client, meter),
    decorateTask: flows.decorateTask,
    decorateAwsClient: (client) =>
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const action = String(context.commandName ?? "?").replace(/Command$/, "");
          counts[action] = (counts[action] ?? 0) + 1;
          const t0 = performance.now();
          try {
            return await next(args);
          } finally {
            inEc2.ms += performance.now() - t0;
          }
        },
        { step: "initialize", name: "benchEc2Counter" },
      ),
  });
  serverTimes.port = Number(new URL(runtime.url).port);
  const checks: Check[] = [];
  try {
    // Each execution's end, by load balancer: the flow's end is seen in process, not polled.
    const ends = new Map<string, Promise<unknown>>();
    const engine = runtime.engine;
    const start = engine.start.bind(engine);
    engine.start = async (flow, name, input) => {
      const started = await start(flow, name, input);
      const lbId = /[0-9a-f]{8}-[0-9a-f-]{27}/.exec(name)?.[0];
      if (lbId) ends.set(lbId, engine.wait(started.executionArn));
      return started;
    };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(new URL(path, runtime.url), {
        method,
        headers: { "content-type": "application/json", "x-project-id": "bench" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const flavor = async (name: string, data: Record<string, unknown>) => {
      const fp = await call("POST", "/v2/lbaas/flavorprofiles", {
        flavorprofile: { name, provider_name: "amphora", flavor_data: JSON.stringify(data) },
      });
      return (await call("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: fp.flavorprofile.id, enabled: true } })).flavor
        .id as string;
    };
    const flavors: Record<Topology, [string, string]> = {
      SINGLE: [
        await flavor("single", { loadbalancer_topology: "SINGLE", compute_flavor: "t3.micro" }),
        await flavor("single-large", { loadbalancer_topology: "SINGLE", compute_flavor: "t3.large" }),
      ],
      ACTIVE_STANDBY: [
        await flavor("ha", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "t3.micro" }),
        await flavor("ha-large", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "t3.large" }),
      ],
    };
    const status = async (lbId: string) =>
      (await call("GET", `/v2/lbaas/loadbalancers/${lbId}`).catch(() => undefined))?.loadbalancer?.provisioning_status as
        string | undefined;

    /** Runs one flow: the request, then its execution's end; what EC2 was asked meanwhile. */
    const timed = async (lbId: string | undefined, request: () => Promise<string>): Promise<[string, Sample]> => {
      for (const k of Object.keys(counts)) delete counts[k];
      proxy.calls.length = 0;
      inEc2.ms = 0;
      await moto.record();
      meter.reset();
      const use = (flows.into = noFlowUse());
      const server: number[] = (serverTimes.into = []);
      const t0 = performance.now();
      const id = (await request()) ?? lbId;
      await ends.get(id);
      const ms = performance.now() - t0;
      flows.into = serverTimes.into = undefined;
      const units = unitsOf(meter.rows());
      const secrets: Record<string, number> = {};
      for (const r of await moto.recorded()) {
        const op = r.target?.startsWith("secretsmanager.") ? r.target.slice("secretsmanager.".length) : undefined;
        if (op) secrets[op] = (secrets[op] ?? 0) + 1;
      }
      const measured: FlowCounts = {
        apiRequests: server.length,
        apiBilledMs: server.reduce((t, x) => t + Math.max(1, Math.ceil(x)), 0),
        readUnits: units.readUnits,
        writeUnits: units.writeUnits,
        transitions: use.transitions,
        tasks: use.tasks,
        taskBilledMs: use.taskBilledMs,
        secretsCalls: Object.values(secrets).reduce((a, b) => a + b, 0),
        instanceHours: {},
      };
      return [
        id,
        { ms, ec2Ms: inEc2.ms, calls: { ...counts }, secrets, http: proxy.calls.length, status: await status(id), counts: measured },
      ];
    };

    const samples = new Map<string, Sample[]>();
    const expected: Record<Flow, string | undefined> = {
      create: "ACTIVE",
      "amphora failover": "ACTIVE",
      "LB failover": "ACTIVE",
      resize: "ACTIVE",
      delete: undefined, // DELETED: no longer shown by the API (404)
    };
    /** The DynamoDB units each heartbeat of the load balancer's amphorae costs the receiver, and its requests. */
    const heartbeatUse = async (lbId: string) => {
      const amphorae = (await call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).amphorae as { id: string }[];
      const socket = createSocket("udp4");
      const send = (id: string, seq: number) =>
        new Promise<void>((ok, fail) =>
          socket.send(
            wrapEnvelope({ id, seq, ver: 3, listeners: {}, pools: {}, recv_time: 0 }, HEARTBEAT_KEY),
            runtime.heartbeatPort!,
            "127.0.0.1",
            (e) => (e ? fail(e) : ok()),
          ),
        );
      try {
        for (const a of amphorae) await send(a.id, 0);
        await sleep(500);
        meter.reset();
        for (let n = 1; n <= HEARTBEATS; n++) {
          for (const a of amphorae) await send(a.id, n);
          await sleep(50);
        }
        await sleep(1000);
      } finally {
        socket.close();
      }
      const u = unitsOf(meter.rows());
      const k = HEARTBEATS * amphorae.length;
      return { readUnits: u.readUnits / k, writeUnits: u.writeUnits / k, requests: u.requests / k };
    };

    /** One round of the five flows on a new load balancer of `topology`, each sample given to `note`; the heartbeats' use when asked. */
    const round = async (name: string, topology: Topology, note: (flow: Flow, s: Sample) => void, heartbeats = false) => {
      const [lbId, created] = await timed(undefined, async () => {
        const out = await call("POST", "/v2/lbaas/loadbalancers", {
          loadbalancer: { name, vip_subnet_id: SUBNET, flavor_id: flavors[topology][0] },
        });
        return out.loadbalancer.id as string;
      });
      note("create", created);
      const beats = heartbeats ? await heartbeatUse(lbId) : undefined;
      const amphorae = (await call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).amphorae as { id: string; role: string }[];
      const first = amphorae.find((a) => a.role !== "BACKUP")!;
      note("amphora failover", (await timed(lbId, async () => (await call("PUT", `/v2/octavia/amphorae/${first.id}/failover`), lbId)))[1]);
      note("LB failover", (await timed(lbId, async () => (await call("PUT", `/v2/lbaas/loadbalancers/${lbId}/failover`), lbId)))[1]);
      note(
        "resize",
        (
          await timed(
            lbId,
            async () => (await call("PUT", `/v2/lbaas/loadbalancers/${lbId}/resize`, { new_flavor_id: flavors[topology][1] }), lbId),
          )
        )[1],
      );
      note("delete", (await timed(lbId, async () => (await call("DELETE", `/v2/lbaas/loadbalancers/${lbId}`), lbId)))[1]);
      return beats;
    };
    const noted = (into: Map<string, Sample[]>, topology: Topology) => (flow: Flow, s: Sample) => {
      const key = `${topology}\t${flow}`;
      into.set(key, [...(into.get(key) ?? []), s]);
      if (s.status !== expected[flow])
        checks.push({ name: `${topology} ${flow}`, ok: false, detail: `ended ${s.status}, not ${expected[flow]}` });
    };
    for (let r = 0; r < ROUNDS; r++) for (const topology of TOPOLOGIES) await round(`bench-${r}`, topology, noted(samples, topology));
    // The boot round: each new instance `pending` for BOOT_LOOKS describes; and the heartbeats.
    const booted = new Map<string, Sample[]>();
    const beats = new Map<Topology, { readUnits: number; writeUnits: number; requests: number }>();
    for (const topology of TOPOLOGIES) {
      proxy.boot({ pendingDescribes: BOOT_LOOKS });
      try {
        const used = (await round("bench-boot", topology, noted(booted, topology), true))!;
        beats.set(topology, used);
        if (!(used.writeUnits > 0))
          checks.push({ name: `${topology} heartbeats`, ok: false, detail: "the receiver wrote nothing for them" });
      } finally {
        proxy.boot({ pendingDescribes: 0 });
      }
    }

    console.log(
      `EC2 calls and time per flow, ${ROUNDS} rounds, anti-affinity on (moto ${moto.endpoint} behind the test proxy; boot excluded)\n`,
    );
    console.log(
      [
        "topology",
        "flow",
        "EC2 calls",
        "by action",
        "per instance launched",
        "API's EC2 calls",
        "Secrets Manager calls",
        "p50 ms",
        "max ms",
        "p50 in EC2 ms",
        "EC2 share",
      ].join("\t"),
    );
    for (const [key, list] of samples) {
      const calls = list[0]!.calls;
      const total = Object.values(calls).reduce((a, b) => a + b, 0);
      const launched = calls.RunInstances ?? 0;
      const byAction = Object.entries(calls)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([a, n]) => `${a} ${n}`)
        .join(", ");
      const secrets = list[0]!.secrets;
      const same = list.every(
        (s) =>
          JSON.stringify(s.calls) === JSON.stringify(calls) &&
          s.http === list[0]!.http &&
          JSON.stringify(s.secrets) === JSON.stringify(secrets),
      );
      if (!same)
        checks.push({
          name: `${key.replace("\t", " ")} calls`,
          ok: false,
          detail: `varied: ${list.map((s) => `${JSON.stringify(s.calls)} ${JSON.stringify(s.secrets)}`).join(" ")}`,
        });
      const ms = list.map((s) => s.ms);
      const ec2Ms = list.map((s) => s.ec2Ms);
      console.log(
        [
          key,
          total,
          byAction,
          launched ? (total / launched).toFixed(1) : "-",
          list[0]!.http - total,
          Object.entries(secrets)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([a, n]) => `${a} ${n}`)
            .join(", ") || "-",
          pct(ms, 0.5).toFixed(0),
          Math.max(...ms).toFixed(0),
          pct(ec2Ms, 0.5).toFixed(0),
          `${((100 * pct(ec2Ms, 0.5)) / pct(ms, 0.5)).toFixed(0)}%`,
        ].join("\t"),
      );
    }
    costReport(samples, booted, beats);
    checks.push({
      name: "every flow ended as it should, with the same EC2 calls every round",
      ok: checks.length === 0,
      detail: `${samples.size} flows × ${ROUNDS} rounds`,
    });
  } finally {
    await runtime.stop();
    await proxy.stop();
    await Promise.all([moto.stop(), dynamo.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const { lines, missed } = checkLines(checks, "checks");
  console.log(["", ...lines].join("\n"));
  process.exitCode = missed ? 1 : 0;
}

/**
 * What the flows and an hour of a load balancer cost on AWS: the counts measured (boot excluded),
 * what each further look of a boot wait adds (the boot round), the boot assumed in BOOT, and the
 * prices of ./cost.ts.
 */
function costReport(
  samples: Map<string, Sample[]>,
  booted: Map<string, Sample[]>,
  beats: Map<Topology, { readUnits: number; writeUnits: number; requests: number }>,
) {
  const memory = lambdaMemory();
  const M = (x: number) => cents(x);
  const compute = bootWait(BOOT.runningAfterSec, BOOT.activeWaitSec, false);
  const agent = bootWait(BOOT.agentAfterSec, BOOT.retryIntervalSec, true);
  const extraLooks = compute.looks - 1 + (agent.looks - 1);
  const bootSec = compute.seconds + agent.seconds;
  const out: string[] = [];
  const p = (line = "") => out.push(line);
  p();
  p(
    `Cost: what each flow used (means of ${ROUNDS} rounds, boot excluded; DynamoDB units as AWS would bill them, API request and flow together):`,
  );
  p();
  p("| topology | flow | API requests / ms | RRU / WRU | transitions | task calls / ms | Secrets Manager calls |");
  p("|---|---|---:|---:|---:|---:|---:|");
  for (const [key, list] of samples) {
    const c = meanCounts(list);
    const [topology, flow] = key.split("\t");
    p(
      `| ${topology} | ${flow} | ${fixed(c.apiRequests)} / ${c.apiBilledMs.toFixed(0)} | ${fixed(c.readUnits)} / ${fixed(c.writeUnits)} | ${fixed(c.transitions)} | ${fixed(c.tasks)} / ${c.taskBilledMs.toFixed(0)} | ${fixed(c.secretsCalls)} |`,
    );
  }
  p();
  p(
    `Each further look of the flow's boot waits (the boot round: each new instance \`pending\` for ${BOOT_LOOKS} describes; its figures less the rounds', ÷ ${BOOT_LOOKS}):`,
  );
  p();
  p("| topology | flow | transitions | task calls / ms | RRU / WRU |");
  p("|---|---|---:|---:|---:|");
  const perLook = new Map<string, FlowCounts>();
  for (const [key, list] of booted) {
    const base = samples.get(key);
    if (!base) continue;
    // Counts, not times: a look's task time is the flow's mean per task (a difference of times is noise here).
    const b = meanCounts(base);
    const d = { ...addCounts(addCounts(noCounts(), meanCounts(list), 1 / BOOT_LOOKS), b, -1 / BOOT_LOOKS), apiRequests: 0, apiBilledMs: 0 };
    d.taskBilledMs = b.tasks ? d.tasks * (b.taskBilledMs / b.tasks) : 0;
    perLook.set(key, d);
    const [topology, flow] = key.split("\t");
    p(
      `| ${topology} | ${flow} | ${fixed(d.transitions)} | ${fixed(d.tasks)} / ${d.taskBilledMs.toFixed(0)} | ${fixed(d.readUnits)} / ${fixed(d.writeUnits)} |`,
    );
  }
  p();
  p(
    `On AWS, a boot assumed (not measured): \`running\` ${BOOT.runningAfterSec} s after RunInstances (the compute wait: ${compute.looks} looks, ${BOOT.activeWaitSec} s apart), ` +
      `the agent answering ${BOOT.agentAfterSec} s later (the agent wait: ${agent.looks} looks over ${agent.seconds} s): ${extraLooks} looks more than here for each boot wait, ` +
      `and a failover's new instance running ${bootSec} s and the rest of its flow beside the one it replaces (${AMPHORA_TYPE}).`,
  );
  p(
    `Prices (${PRICES.region}, ${PRICES.date}; ./cost.ts): Lambda at ${memory.note}; Secrets Manager $${(PRICES.secretsApiCall * 10_000).toFixed(2)} per 10,000 calls; EC2's API calls free.`,
  );
  p();
  p(
    "| topology | flow | API Gateway + API Lambda | DynamoDB | Step Functions | task Lambdas | Secrets Manager calls | instance overlap | **total** | a million of them |",
  );
  p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const [key, list] of samples) {
    const [topology, flow] = key.split("\t") as [Topology, Flow];
    if (!PRICED.includes(flow)) continue;
    let c = meanCounts(list);
    const look = perLook.get(key);
    if (look) c = addCounts(c, look, extraLooks);
    const launched = list[0]!.calls.RunInstances ?? 0;
    if (flow.includes("failover"))
      c.instanceHours = {
        [AMPHORA_TYPE]:
          (launched *
            (bootSec +
              pct(
                list.map((s) => s.ms),
                0.5,
              ) /
                1000)) /
          3600,
      };
    const d = flowDollars(c, memory);
    p(
      `| ${topology} | ${flow} | ${M(d.gateway + d.apiLambda)} | ${M(d.dynamo)} | ${M(d.sfn)} | ${M(d.tasks)} | ${M(d.secrets)} | ${M(d.instances)} | **${M(d.total)}** | ${dollars(d.total * 1e6)} |`,
    );
  }
  p();
  p(
    `An hour of a load balancer (${AMPHORA_TYPE} amphorae with an ${AMPHORA_VOLUME_GB} GB gp3 volume each, no public IPv4; a heartbeat every 10 s from each amphora, its DynamoDB units measured):`,
  );
  p();
  p("| topology | amphorae | instances | volumes | secrets | public IPv4 | heartbeats (RRU / WRU each) | **an hour** | a month |");
  p("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const topology of TOPOLOGIES) {
    const amphorae = samples.get(`${topology}\tcreate`)?.[0]?.calls.RunInstances ?? 0;
    const b = beats.get(topology) ?? { readUnits: 0, writeUnits: 0, requests: 0 };
    const shape: AmphoraShape = {
      instanceType: AMPHORA_TYPE,
      volumeGb: AMPHORA_VOLUME_GB,
      publicIpv4: false,
      heartbeatsAnHour: 3600 / 10,
      heartbeatReadUnits: b.readUnits,
      heartbeatWriteUnits: b.writeUnits,
    };
    const h = loadBalancerHourly(amphorae, shape);
    p(
      `| ${topology} | ${amphorae} | ${M(h.instance)} | ${M(h.volume)} | ${M(h.secret)} | ${M(h.publicIpv4)} | ${M(h.heartbeats)} (${fixed(b.readUnits)} / ${fixed(b.writeUnits)}) | **${M(h.total)}** | ${dollars(h.total * PRICES.hoursPerMonth)} |`,
    );
  }
  const fixedCosts = deployFixedMonthly(ZONES);
  const hm = healthManagerMonthly();
  const octavia = serversMonthly(OCTAVIA_SERVERS);
  p();
  p(
    `Fixed a month (${PRICES.hoursPerMonth} h): Ottava's interface endpoints (EC2, Secrets Manager, SSM) in ${ZONES} zones ${dollars(fixedCosts.endpoints)}, ` +
      `the first-boot path's NAT gateways (one a zone) ${dollars(fixedCosts.nat)}, the secrets' KMS key ${dollars(fixedCosts.kms)}, the heartbeat receiver ${dollars(hm.monthly)} (${hm.note}); ` +
      `an Octavia control plane's servers ${dollars(octavia.total)} (${OCTAVIA_SERVERS.map((s) => `${s.what.split(" (")[0]} ${s.count} × ${s.instanceType}`).join(", ")}, each with a gp3 volume).`,
  );
  console.log(out.join("\n"));
}

await main();

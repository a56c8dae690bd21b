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
//   npm run bench:ec2
//   npm run bench:ec2 -- --rounds 2
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { arg, benchStackSettings, checkLines, pct, SUBNET, type Check } from "./common";

const ROUNDS = Number(arg("rounds") ?? 5);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 50) throw new Error(`--rounds must be an integer in 1..50, got ${arg("rounds")}`);

const FLOWS = ["create", "amphora failover", "LB failover", "resize", "delete"] as const;
type Flow = (typeof FLOWS)[number];
const TOPOLOGIES = ["SINGLE", "ACTIVE_STANDBY"] as const;
type Topology = (typeof TOPOLOGIES)[number];

interface Sample {
  ms: number;
  /** Secrets Manager calls by operation (the amphorae's secrets), as moto recorded them. */
  secrets: Record<string, number>;
  /** Of which in EC2 calls. */
  ec2Ms: number;
  calls: Record<string, number>;
  http: number;
  status: string | undefined;
}

async function main() {
  process.env.POWERTOOLS_METRICS_DISABLED = "true";
  // Imported here: the environment above is set before the packages load.
  const [{ EC2Client }, { loadConfig }, { startDynamoDbLocal, startRuntime }, aws, { createLocalCa }] = await Promise.all([
    import("@aws-sdk/client-ec2"),
    import("@ottava/core"),
    import("@ottava/local"),
    import("@ottava/aws/testing"),
    import("@ottava/controller"),
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
  });
  const runtime = await startRuntime({
    config,
    inMemory: true,
    dataDir,
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
      const t0 = performance.now();
      const id = (await request()) ?? lbId;
      await ends.get(id);
      const ms = performance.now() - t0;
      const secrets: Record<string, number> = {};
      for (const r of await moto.recorded()) {
        const op = r.target?.startsWith("secretsmanager.") ? r.target.slice("secretsmanager.".length) : undefined;
        if (op) secrets[op] = (secrets[op] ?? 0) + 1;
      }
      return [id, { ms, ec2Ms: inEc2.ms, calls: { ...counts }, secrets, http: proxy.calls.length, status: await status(id) }];
    };

    const samples = new Map<string, Sample[]>();
    const expected: Record<Flow, string | undefined> = {
      create: "ACTIVE",
      "amphora failover": "ACTIVE",
      "LB failover": "ACTIVE",
      resize: "ACTIVE",
      delete: undefined, // DELETED: no longer shown by the API (404)
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const topology of TOPOLOGIES) {
        const note = (flow: Flow, s: Sample) => {
          const key = `${topology}\t${flow}`;
          samples.set(key, [...(samples.get(key) ?? []), s]);
          if (s.status !== expected[flow])
            checks.push({ name: `${topology} ${flow}`, ok: false, detail: `ended ${s.status}, not ${expected[flow]}` });
        };
        const [lbId, created] = await timed(undefined, async () => {
          const out = await call("POST", "/v2/lbaas/loadbalancers", {
            loadbalancer: { name: `bench-${round}`, vip_subnet_id: SUBNET, flavor_id: flavors[topology][0] },
          });
          return out.loadbalancer.id as string;
        });
        note("create", created);
        const amphorae = (await call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).amphorae as { id: string; role: string }[];
        const first = amphorae.find((a) => a.role !== "BACKUP")!;
        note(
          "amphora failover",
          (await timed(lbId, async () => (await call("PUT", `/v2/octavia/amphorae/${first.id}/failover`), lbId)))[1],
        );
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

await main();

// The benchmarks' cost model: AWS list prices (assumed, not measured: one table, PRICES) and the
// arithmetic that turns what a benchmark counted into dollars. `npm run bench:api` prices each API
// call and its flow; `npm run bench:ec2` each create, failover and delete of a load balancer with the
// EC2 driver, and an hour of one. Pure but for lambdaMemory and healthManagerMonthly, which read what
// stacks/ declares.
import { readFileSync } from "node:fs";

/**
 * On-demand list prices in us-east-1 (the Octavia control plane's sources are in OCTAVIA_SERVERS).
 * The serverless ones are issue 12's figures (November 2026; DynamoDB's since its November 2024 cut);
 * the EC2, EBS, public IPv4, Secrets Manager, PrivateLink, NAT gateway and KMS ones were added for
 * issue 25 (November 2026). Not checked by the benchmarks: change them here.
 */
export const PRICES = {
  date: "November 2026",
  region: "us-east-1",
  hoursPerMonth: 730,
  /** DynamoDB on-demand, per request unit. */
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  /** Lambda, x86_64: per request and per GB-second. */
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecond: 0.0000166667,
  /** Step Functions Standard, per state transition. */
  sfnTransition: 0.025 / 1000,
  /** API Gateway HTTP API, per request (the first 300 million a month). */
  apiRequest: 1.0 / 1e6,
  /** EC2 On-Demand, Linux, per hour: the amphorae's candidate types and the Octavia servers' type. */
  ec2Hourly: {
    "t3.micro": 0.0104,
    "t3.small": 0.0208,
    "t3.medium": 0.0416,
    "c6i.large": 0.085,
    "m6i.large": 0.096,
  } as Record<string, number>,
  /** EBS gp3, per GB-month (its baseline 3,000 IOPS and 125 MB/s included). */
  ebsGp3GbMonth: 0.08,
  /** A public IPv4 address, in use or not, per hour (since February 2024). */
  publicIpv4Hour: 0.005,
  /** Secrets Manager: per secret-month (prorated by the hour), and per API call ($0.05 per 10,000). */
  secretMonth: 0.4,
  secretsApiCall: 0.05 / 10_000,
  /** PrivateLink interface endpoint, per endpoint and zone-hour (data processed: $0.01 per GB more). */
  interfaceEndpointAzHour: 0.01,
  /** NAT gateway, per hour (data processed: $0.045 per GB more). */
  natGatewayHour: 0.045,
  /** KMS, a customer managed key, per month. */
  kmsKeyMonth: 1,
  /** Ottava's own always-on part (the heartbeat receiver, stacks/health.ts): Fargate (Linux, x86) and its Network Load Balancer. */
  fargateVcpuHour: 0.04048,
  fargateGbHour: 0.004445,
  nlbHour: 0.0225,
};

export type Prices = typeof PRICES;

/** A server an Octavia control plane keeps running, priced as an EC2 instance and its gp3 volume. */
export interface Server {
  what: string;
  count: number;
  instanceType: string;
  volumeGb: number;
  /** Why this many of this size. */
  source: string;
}

/**
 * A typical highly available Octavia control plane, self-run on EC2 as OpenStack's own guides lay it
 * out, each part on its own servers (nothing shared with other OpenStack services): three
 * controllers running octavia-api, -worker, -health-manager and -housekeeping behind HAProxy and
 * keepalived (no AWS load balancer); a MariaDB Galera cluster of three; a RabbitMQ cluster of three.
 * The amphorae are the same EC2 instances with Octavia or Ottava, so they are not in it.
 */
export const OCTAVIA_SERVERS: Server[] = [
  {
    what: "controllers (octavia-api, -worker, -health-manager, -housekeeping; HAProxy + keepalived for the API's address)",
    count: 3,
    instanceType: "m6i.large",
    volumeGb: 30,
    source:
      "three controllers: the OpenStack HA guide's minimum for an active/active control plane; 2 vCPU / 8 GiB each, the controller node of OpenStack's install guide",
  },
  {
    what: "MariaDB Galera cluster (Octavia's database)",
    count: 3,
    instanceType: "m6i.large",
    volumeGb: 50,
    source:
      "three nodes: the HA guide's minimum for Galera's quorum; its own cluster, as OpenStack's large-scale guide recommends one Galera cluster per service",
  },
  {
    what: "RabbitMQ cluster (octavia-api → octavia-worker)",
    count: 3,
    instanceType: "m6i.large",
    volumeGb: 30,
    source:
      "three nodes, as OpenStack-Ansible's rabbitmq role clusters them and as Amazon MQ's cluster deployment has them; 2 vCPU / 8 GiB, the size Amazon MQ recommends for production (m5.large and up)",
  },
];

/** A month of servers: each its instance and its volume. */
export function serversMonthly(
  servers: Server[],
  p: Prices = PRICES,
): { rows: { server: Server; hourly: number; monthly: number }[]; total: number } {
  const rows = servers.map((server) => {
    const hourly = hourlyOf(server.instanceType, p) + (server.volumeGb * p.ebsGp3GbMonth) / p.hoursPerMonth;
    return { server, hourly, monthly: server.count * hourly * p.hoursPerMonth };
  });
  return { rows, total: rows.reduce((t, r) => t + r.monthly, 0) };
}

export function hourlyOf(instanceType: string, p: Prices = PRICES): number {
  const hourly = p.ec2Hourly[instanceType];
  if (hourly === undefined) throw new Error(`no price for ${instanceType}: add it to PRICES.ec2Hourly`);
  return hourly;
}

/** What was counted of one operation (an API call and the flow it starts; means per call). */
export interface FlowCounts {
  /** API requests: each an API Gateway request and an API Lambda invocation. */
  apiRequests: number;
  /** The API requests' time in the server, ms (each Lambda's billed duration: rounded up to the ms, at least 1). */
  apiBilledMs: number;
  /** DynamoDB request units AWS would bill, API and flow together. */
  readUnits: number;
  writeUnits: number;
  /** Step Functions Standard state transitions. */
  transitions: number;
  /** Task invocations (one Lambda invocation each) and their billed time, ms. */
  tasks: number;
  taskBilledMs: number;
  /** Secrets Manager API calls (EC2's are free). */
  secretsCalls: number;
  /** Instance-hours by type beyond the load balancer's own (a failover's replacement while its predecessor still runs). */
  instanceHours: Record<string, number>;
}

export const noCounts = (): FlowCounts => ({
  apiRequests: 0,
  apiBilledMs: 0,
  readUnits: 0,
  writeUnits: 0,
  transitions: 0,
  tasks: 0,
  taskBilledMs: 0,
  secretsCalls: 0,
  instanceHours: {},
});

/** What one operation costs, by service, in dollars. */
export interface FlowDollars {
  gateway: number;
  apiLambda: number;
  dynamo: number;
  sfn: number;
  tasks: number;
  secrets: number;
  instances: number;
  total: number;
}

/** Lambda's memory, MB: the API function's and the task functions'. */
export interface LambdaMemory {
  api: number;
  task: number;
}

export function flowDollars(c: FlowCounts, memory: LambdaMemory, p: Prices = PRICES): FlowDollars {
  const gbSeconds = (ms: number, mb: number) => (ms / 1000) * (mb / 1024);
  const gateway = c.apiRequests * p.apiRequest;
  const apiLambda = c.apiRequests * p.lambdaRequest + gbSeconds(c.apiBilledMs, memory.api) * p.lambdaGbSecond;
  const dynamo = c.readUnits * p.dynamoReadUnit + c.writeUnits * p.dynamoWriteUnit;
  const sfn = c.transitions * p.sfnTransition;
  const tasks = c.tasks * p.lambdaRequest + gbSeconds(c.taskBilledMs, memory.task) * p.lambdaGbSecond;
  const secrets = c.secretsCalls * p.secretsApiCall;
  const instances = Object.entries(c.instanceHours).reduce((t, [type, hours]) => t + hours * hourlyOf(type, p), 0);
  return {
    gateway,
    apiLambda,
    dynamo,
    sfn,
    tasks,
    secrets,
    instances,
    total: gateway + apiLambda + dynamo + sfn + tasks + secrets + instances,
  };
}

/** `a` plus `k` times `b`. */
export function addCounts(a: FlowCounts, b: FlowCounts, k = 1): FlowCounts {
  const instanceHours = { ...a.instanceHours };
  for (const [type, h] of Object.entries(b.instanceHours)) instanceHours[type] = (instanceHours[type] ?? 0) + k * h;
  return {
    apiRequests: a.apiRequests + k * b.apiRequests,
    apiBilledMs: a.apiBilledMs + k * b.apiBilledMs,
    readUnits: a.readUnits + k * b.readUnits,
    writeUnits: a.writeUnits + k * b.writeUnits,
    transitions: a.transitions + k * b.transitions,
    tasks: a.tasks + k * b.tasks,
    taskBilledMs: a.taskBilledMs + k * b.taskBilledMs,
    secretsCalls: a.secretsCalls + k * b.secretsCalls,
    instanceHours,
  };
}

/** One amphora as it runs: its instance, its root volume, its address, and what its heartbeats cost the health manager's table. */
export interface AmphoraShape {
  instanceType: string;
  volumeGb: number;
  /** Whether it holds a public IPv4 address (Ottava asks for none; a subnet that maps them would give one). */
  publicIpv4: boolean;
  /** Heartbeats an hour (3600 / heartbeat_interval) and the DynamoDB units each costs. */
  heartbeatsAnHour: number;
  heartbeatReadUnits: number;
  heartbeatWriteUnits: number;
}

/** An hour of a load balancer of `amphorae` amphorae, by item, in dollars. */
export function loadBalancerHourly(amphorae: number, a: AmphoraShape, p: Prices = PRICES) {
  const instance = amphorae * hourlyOf(a.instanceType, p);
  const volume = (amphorae * a.volumeGb * p.ebsGp3GbMonth) / p.hoursPerMonth;
  const publicIpv4 = a.publicIpv4 ? amphorae * p.publicIpv4Hour : 0;
  const secret = (amphorae * p.secretMonth) / p.hoursPerMonth;
  const heartbeats = amphorae * a.heartbeatsAnHour * (a.heartbeatReadUnits * p.dynamoReadUnit + a.heartbeatWriteUnits * p.dynamoWriteUnit);
  return { instance, volume, publicIpv4, secret, heartbeats, total: instance + volume + publicIpv4 + secret + heartbeats };
}

/**
 * A deploy's fixed monthly costs with the EC2 compute driver, by item: the interface endpoints of
 * EC2, Secrets Manager and SSM in each of `zones` zones (data processed extra), and, for the
 * first-boot path only, a NAT gateway in each (data processed extra); the secrets' KMS key.
 */
export function deployFixedMonthly(zones: number, p: Prices = PRICES) {
  const endpoints = 3 * zones * p.interfaceEndpointAzHour * p.hoursPerMonth;
  const nat = zones * p.natGatewayHour * p.hoursPerMonth;
  return { endpoints, nat, kms: p.kmsKeyMonth };
}

/**
 * A boot wait when what it waits for is there `readyAfterSec` after the wait began: how many looks it
 * takes and the seconds it waits between them. The compute wait looks every `intervalSec`
 * (amp_active_wait_sec); the agent wait after 1, 2, 4, … seconds, at most `intervalSec`
 * (connection_retry_interval), as amphoraeConnectivityWait does.
 */
export function bootWait(readyAfterSec: number, intervalSec: number, backoff: boolean): { looks: number; seconds: number } {
  let looks = 1;
  let seconds = 0;
  for (; seconds < readyAfterSec; looks++) seconds += backoff ? Math.min(intervalSec, 2 ** (looks - 1)) : intervalSec;
  return { looks, seconds };
}

/** The memory (MB) of the API's and of the task Lambdas as stacks/ declares it; SST's default (1024 MB) where it does not. */
export function lambdaMemory(): LambdaMemory & { note: string } {
  const SST_DEFAULT = 1024;
  const declared = (file: string) => {
    try {
      const text = readFileSync(new URL(`../../stacks/${file}`, import.meta.url), "utf8");
      const m = /memory:\s*"(\d+)\s*(MB|GB)"/.exec(text);
      return { mb: m ? Number(m[1]) * (m[2] === "GB" ? 1024 : 1) : undefined, arm: /architecture:\s*"arm64"/.test(text) };
    } catch {
      return { mb: undefined, arm: false };
    }
  };
  const api = declared("api.ts");
  const task = declared("flows.ts");
  const note =
    `API Lambda ${api.mb ?? SST_DEFAULT} MB (${api.mb ? "stacks/api.ts" : "SST's default: stacks/api.ts declares none"}), ` +
    `task Lambdas ${task.mb ?? SST_DEFAULT} MB (${task.mb ? "stacks/flows.ts" : "SST's default: stacks/flows.ts declares none"})` +
    (api.arm || task.arm ? "; the stacks declare arm64 but x86_64 prices are used" : ", x86_64");
  return { api: api.mb ?? SST_DEFAULT, task: task.mb ?? SST_DEFAULT, note };
}

/** Ottava's always-on heartbeat receiver as stacks/health.ts declares it (its Fargate tasks), a month. */
export function healthManagerMonthly(p: Prices = PRICES): { monthly: number; note: string } {
  let cpu = 0.5;
  let gb = 1;
  let tasks = 2;
  try {
    const text = readFileSync(new URL("../../stacks/health.ts", import.meta.url), "utf8");
    cpu = Number(/cpu:\s*"([\d.]+) vCPU"/.exec(text)?.[1] ?? cpu);
    gb = Number(/memory:\s*"([\d.]+) GB"/.exec(text)?.[1] ?? gb);
    tasks = Number(/min:\s*(\d+)/.exec(text)?.[1] ?? tasks);
  } catch {
    // The defaults above: the declaration when this was written.
  }
  const fargate = tasks * (cpu * p.fargateVcpuHour + gb * p.fargateGbHour) * p.hoursPerMonth;
  const nlb = p.nlbHour * p.hoursPerMonth;
  return {
    monthly: fargate + nlb,
    note:
      `${tasks} Fargate tasks × (${cpu} vCPU, ${gb} GB) at $${p.fargateVcpuHour}/vCPU-h and $${p.fargateGbHour}/GB-h = ${dollars(fargate)}, ` +
      `and their Network Load Balancer at $${p.nlbHour}/h = ${dollars(nlb)} (its capacity units extra)`,
  };
}

export const dollars = (x: number) => `$${x.toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
/** A small amount with 3 significant digits ($0.0000123). */
export const cents = (x: number | undefined) => (x === undefined ? "–" : x === 0 ? "$0" : `$${x.toPrecision(3)}`);

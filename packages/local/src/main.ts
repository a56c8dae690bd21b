// `npm start`: Ottava on this machine, no cloud needed. Flags are shortcuts for OTTAVA_* settings.
import { parseArgs } from "node:util";
import { loadConfig } from "@ottava/core";
import { startStandIn } from "./cli-standin";
import { readInjected } from "./injected";
import { startRuntime } from "./runtime";

const USAGE = `Usage: npm start -- [options]

  --host HOST       address to listen on (OTTAVA_BIND_HOST, default 127.0.0.1)
  --port PORT       port to listen on (OTTAVA_BIND_PORT, default 9876; 0 picks a free one)
  --in-memory       keep no data: DynamoDB Local in memory, the local amphorae in a temporary
                    directory (OTTAVA_IN_MEMORY=true)
  --data-dir DIR    where DynamoDB Local keeps its data, and the local amphorae theirs (OTTAVA_DATA_DIR, default .ottava)
  --dataplane NAME  noop (nothing is balanced) or haproxy: each amphora a local HAProxy process, each VIP
                    a loopback address of OTTAVA_LOCAL_VIP_RANGE (OTTAVA_DATAPLANE, default noop)
  --heartbeat-port PORT  the UDP port amphora heartbeats are received on (OTTAVA_HEARTBEAT_PORT, default 5555;
                    0 picks a free one)
  --vip-range CIDR  the loopback addresses the haproxy data plane hands out as VIPs (OTTAVA_LOCAL_VIP_RANGE,
                    default 127.0.100.0/24); a second stack on this machine needs a range of its own
  --cli-standin PORT  also answer, on 127.0.0.1:PORT, the Neutron and Keystone look-ups the openstack
                    CLI makes without a cloud (its clouds.yaml auth.endpoint; OTTAVA_CLI_STANDIN_PORT)
  -h, --help        this text

Every OTTAVA_* setting of docs/configuration.md applies; OTTAVA_NOOP_FAULTS, OTTAVA_NOOP_LATENCY and
OTTAVA_DYNAMODB_FAULTS (injected faults and latency, for tests and demonstrations) are npm start's alone.
`;

async function main() {
  const { values } = parseArgs({
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "in-memory": { type: "boolean" },
      "data-dir": { type: "string" },
      dataplane: { type: "string" },
      "heartbeat-port": { type: "string" },
      "vip-range": { type: "string" },
      "cli-standin": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const env = { ...process.env };
  if (values.host !== undefined) env.OTTAVA_BIND_HOST = values.host;
  if (values.port !== undefined) env.OTTAVA_BIND_PORT = values.port;
  if (values.dataplane !== undefined) env.OTTAVA_DATAPLANE = values.dataplane;
  if (values["heartbeat-port"] !== undefined) env.OTTAVA_HEARTBEAT_PORT = values["heartbeat-port"];
  if (values["vip-range"] !== undefined) env.OTTAVA_LOCAL_VIP_RANGE = values["vip-range"];
  const config = loadConfig(env);
  const injected = readInjected(env);
  const inMemory = values["in-memory"] ?? ["1", "true", "yes"].includes((env.OTTAVA_IN_MEMORY ?? "").toLowerCase());
  const dataDir = values["data-dir"] ?? env.OTTAVA_DATA_DIR ?? ".ottava";

  // The stand-in first: a port it cannot take stops the start before anything else runs.
  const standInPort = values["cli-standin"] ?? env.OTTAVA_CLI_STANDIN_PORT;
  if (standInPort !== undefined && !/^\d+$/.test(standInPort)) throw new Error(`--cli-standin takes a port number, not '${standInPort}'`);
  const standIn = standInPort === undefined ? undefined : await startStandIn(Number(standInPort));

  const runtime = await startRuntime({ config, inMemory, dataDir, injected });
  // One write: whoever waits for the first line has the second too.
  const heartbeats =
    runtime.heartbeatPort === undefined ? "" : `Receiving amphora heartbeats on udp ${config.bindHost}:${runtime.heartbeatPort}\n`;
  process.stdout.write(`Ottava is serving the Octavia v2 API on ${runtime.url}\n${heartbeats}`);
  if (standIn) process.stdout.write(`Answering the openstack CLI's Neutron and Keystone look-ups on ${standIn.url}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping Ottava\n`);
    await standIn?.close();
    await runtime.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((e) => {
  process.stderr.write(`Ottava could not start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});

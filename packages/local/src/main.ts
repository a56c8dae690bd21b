// `npm start`: Ottava on this machine, no cloud needed. Flags are shortcuts for OTTAVA_* settings.
import { parseArgs } from "node:util";
import { loadConfig } from "@ottava/core";
import { startRuntime } from "./runtime";

const USAGE = `Usage: npm start -- [options]

  --host HOST       address to listen on (OTTAVA_BIND_HOST, default 127.0.0.1)
  --port PORT       port to listen on (OTTAVA_BIND_PORT, default 9876; 0 picks a free one)
  --in-memory       keep no data: DynamoDB Local in memory (OTTAVA_IN_MEMORY=true)
  --data-dir DIR    where DynamoDB Local keeps its data (OTTAVA_DATA_DIR, default .ottava)
  -h, --help        this text
`;

async function main() {
  const { values } = parseArgs({
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "in-memory": { type: "boolean" },
      "data-dir": { type: "string" },
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
  const config = loadConfig(env);
  const inMemory = values["in-memory"] ?? ["1", "true", "yes"].includes((env.OTTAVA_IN_MEMORY ?? "").toLowerCase());
  const dataDir = values["data-dir"] ?? env.OTTAVA_DATA_DIR ?? ".ottava";

  const runtime = await startRuntime({ config, inMemory, dataDir });
  process.stdout.write(`Ottava is serving the Octavia v2 API on ${runtime.url}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping Ottava\n`);
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

// The Lambda functions of stacks/ bundled as SST 4.17 bundles them, and a process that loads one and
// answers its first request: what `npm run bench:cold` times and test/bundles.test.ts checks.
//
// SST's Node build (pkg/runtime/node/build.go at v4.17; the esbuild inside the sst binary is 0.27.2,
// this repository's 0.28.2: their outputs differ by a few hundred bytes in a megabyte): ESM, everything
// bundled (the AWS SDK too) but `sharp` and `pg-native`, platform node, the target of the runtime
// (nodejs22.x: es2023), main fields module then main, keepNames, a linked source map (left out of the
// zip), and a banner that defines require, __filename and __dirname. With the stacks' settings
// (stacks/settings.ts NODEJS): minified (SST minifies only when `minify` is set, whatever its docs say)
// and split (`splitting`: the entry is bundle.mjs; what is only imported dynamically goes to chunks
// beside it, loaded when first imported).
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { build } from "esbuild";

export const ROOT = resolve(import.meta.dirname, "../..");

const BANNER = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __filename = topLevelFileUrlToPath(import.meta.url)`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
  "", // SST appends the function's own nodejs.banner (none here)
].join("\n");

/** What the Lambda runtime sets, and what the stacks set, for a process that never reaches AWS. */
const LAMBDA_ENV = {
  AWS_REGION: "us-east-1",
  AWS_DEFAULT_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "AKIDBENCHMARK",
  AWS_SECRET_ACCESS_KEY: "benchmark",
  AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x",
  OTTAVA_TABLE_NAME: "ottava-bench",
  OTTAVA_STATE_MACHINE_ARN_PREFIX: "arn:aws:states:us-east-1:123456789012:stateMachine:ottava-bench-",
};

/** An API Gateway HTTP API (payload 2.0) event: what the API Lambda is invoked with. */
export function httpApiEvent(method: string, path: string) {
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: "",
    headers: { accept: "application/json", host: "bench.execute-api.us-east-1.amazonaws.com", "user-agent": "bench" },
    requestContext: {
      accountId: "123456789012",
      apiId: "bench",
      domainName: "bench.execute-api.us-east-1.amazonaws.com",
      domainPrefix: "bench",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "bench" },
      requestId: "bench",
      routeKey: "$default",
      stage: "$default",
      time: "01/Jan/2026:00:00:00 +0000",
      timeEpoch: 1767225600000,
    },
    isBase64Encoded: false,
  };
}

export interface LambdaFunction {
  name: string;
  /** The handler's file, from the repository root (stacks/: `handler: "<entry without .ts>.<export>"`). */
  entry: string;
  export: string;
  env: Record<string, string>;
  /** A first request that needs no DynamoDB, and what it must answer (a message when it does not). */
  request?: { event: unknown; check: (answer: unknown) => string | undefined };
  /** Budget on the function's .mjs files together (what its zip holds besides source maps), bytes. */
  maxBytes?: number;
  /** Budget on the part of them loaded when the function starts, bytes. */
  maxBytesAtStart?: number;
}

const MiB = 1024 * 1024;
/** A task function's (and the jobs') budget in all: 1 MiB loaded at start, and its chunks (the EC2 client, the X.509 library). */
const TASK_MAX_BYTES = 1.75 * MiB;

/**
 * The task functions' no-op request: planMemberChunks (the Map's chunk numbers, computed from the input
 * alone) with no lock owner, which runTask takes for a flow that holds no lock (it reads no load balancer).
 */
const noopTask = {
  event: { lbId: "bench", chunks: 2 },
  check: (answer: unknown) =>
    JSON.stringify(answer) === "[0,1]" ? undefined : `planMemberChunks answered ${JSON.stringify(answer)}, not [0,1]`,
};

export const FUNCTIONS: LambdaFunction[] = [
  {
    name: "api",
    entry: "packages/api/src/lambda.ts",
    export: "handler",
    env: { AWS_LAMBDA_FUNCTION_NAME: "ottava-bench-Api" },
    request: {
      event: httpApiEvent("GET", "/"),
      check: (answer) => {
        const a = answer as { statusCode?: number; body?: string } | null;
        if (a?.statusCode !== 200) return `GET / answered ${JSON.stringify(a)}`;
        const versions = (JSON.parse(a.body ?? "{}") as { versions?: { id: string; status: string }[] }).versions ?? [];
        return versions.some((v) => v.status === "CURRENT") ? undefined : `GET / listed no CURRENT version: ${a.body}`;
      },
    },
    maxBytes: MiB,
  },
  {
    name: "task",
    entry: "packages/controller/src/lambda.ts",
    export: "handler",
    env: { AWS_LAMBDA_FUNCTION_NAME: "ottava-bench-TaskPlanMemberChunks", OTTAVA_TASK: "planMemberChunks" },
    request: noopTask,
    // The EC2 client (OTTAVA_COMPUTE_DRIVER=ec2) is a chunk of about 0.55 MiB that only its first call loads.
    maxBytes: TASK_MAX_BYTES,
    maxBytesAtStart: MiB,
  },
  {
    // The same no-op task, run by the signing tasks' entry: what its bundle costs to start.
    name: "task (signing)",
    entry: "packages/controller/src/lambda-signing.ts",
    export: "handler",
    env: { AWS_LAMBDA_FUNCTION_NAME: "ottava-bench-TaskComputeCreate", OTTAVA_TASK: "planMemberChunks" },
    request: noopTask,
    maxBytes: TASK_MAX_BYTES,
    maxBytesAtStart: MiB,
  },
  {
    // Every job reads the table: the jobs' bundle is loaded, not invoked.
    name: "jobs",
    entry: "packages/controller/src/jobs/lambda.ts",
    export: "purgeHandler",
    env: { AWS_LAMBDA_FUNCTION_NAME: "ottava-bench-Purge" },
    // The orphan sweep's EC2 client (OTTAVA_COMPUTE_DRIVER=ec2) is a chunk its first pass loads, as the tasks'.
    maxBytes: TASK_MAX_BYTES,
    maxBytesAtStart: MiB,
  },
];

export interface Output {
  /** The file's name in the function's directory. */
  file: string;
  bytes: number;
  /** Loaded when the function starts: the entry, and the chunks it imports statically (transitively). */
  atStart: boolean;
  /** The source files it holds code of (paths from the repository root). */
  inputs: string[];
  /** What the file holds: bytes by package (this repository's code by workspace folder, packages/<name>). */
  packages: Map<string, number>;
}

export interface Bundle {
  /** The entry, bundle.mjs. */
  file: string;
  /** Every .mjs file of the function (what its zip holds, source maps aside). */
  bytes: number;
  /** Those loaded when the function starts. */
  bytesAtStart: number;
  outputs: Output[];
}

const packageOf = (path: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path.split("/").slice(0, 2).join("/");

export interface BundleOptions {
  /** "external" leaves the AWS SDK out (`nodejs: { esbuild: { external: ["@aws-sdk/*"] } }`), for the Lambda runtime's own copy. */
  sdk?: "bundled" | "external";
  /** The stacks' settings (both true) unless said otherwise: to compare with SST's defaults. */
  minify?: boolean;
  splitting?: boolean;
}

/**
 * Builds `fn` into `outdir` (emptied first) as SST does. With the SDK external, `outdir` must resolve
 * it at run time (a node_modules next to it).
 */
export async function bundleFunction(fn: LambdaFunction, outdir: string, opts: BundleOptions = {}): Promise<Bundle> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const minify = opts.minify ?? true;
  const result = await build({
    entryPoints: [join(ROOT, fn.entry)],
    absWorkingDir: ROOT,
    platform: "node",
    format: "esm",
    target: "es2023",
    bundle: true,
    // As SST: one file unless split (then an outdir, the entry named bundle.mjs).
    ...((opts.splitting ?? true)
      ? { splitting: true, outdir, entryNames: "bundle", outExtension: { ".js": ".mjs" } }
      : { outfile: join(outdir, "bundle.mjs") }),
    external: ["sharp", "pg-native", ...(opts.sdk === "external" ? ["@aws-sdk/*"] : [])],
    mainFields: ["module", "main"],
    keepNames: true,
    sourcemap: "linked",
    banner: { js: BANNER },
    minifyWhitespace: minify,
    minifySyntax: minify,
    minifyIdentifiers: minify,
    metafile: true,
    write: true,
    logLevel: "error",
  });
  const js = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith(".mjs"));
  // (Chunks that dynamic imports load name an entryPoint too: the entry is the file named by entryNames.)
  const entry = js.find(([path]) => basename(path) === "bundle.mjs")![0];
  // The entry and what it imports statically, transitively: what Node reads and runs at start.
  const atStart = new Set<string>();
  const visit = (path: string) => {
    if (atStart.has(path)) return;
    atStart.add(path);
    for (const imp of result.metafile.outputs[path]!.imports) if (imp.kind === "import-statement" && !imp.external) visit(imp.path);
  };
  visit(entry);
  const outputs: Output[] = js.map(([path, o]) => {
    const inputs = Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0);
    const packages = new Map<string, number>();
    for (const [input, { bytesInOutput }] of inputs) packages.set(packageOf(input), (packages.get(packageOf(input)) ?? 0) + bytesInOutput);
    return { file: basename(path), bytes: o.bytes, atStart: atStart.has(path), inputs: inputs.map(([input]) => input), packages };
  });
  const sum = (os: Output[]) => os.reduce((n, o) => n + o.bytes, 0);
  return { file: join(outdir, "bundle.mjs"), bytes: sum(outputs), bytesAtStart: sum(outputs.filter((o) => o.atStart)), outputs };
}

/** Bytes by package over some of a bundle's files. */
export function packagesOf(outputs: Output[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const o of outputs) for (const [pkg, bytes] of o.packages) sizes.set(pkg, (sizes.get(pkg) ?? 0) + bytes);
  return sizes;
}

const HARNESS = `import { writeSync } from "node:fs";
const [bundle, name, event] = process.argv.slice(2);
const mod = await import(bundle);
const context = { awsRequestId: "bench", functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, getRemainingTimeInMillis: () => 60000 };
const answer = event === undefined ? null : await mod[name](JSON.parse(event), context);
writeSync(1, "\\n@@answer " + JSON.stringify(answer) + "\\n");
process.exit(0);
`;

/** Writes the harness a cold start runs: it imports a bundle, invokes its handler once (if given an event), prints the answer and exits. */
export function writeHarness(dir: string): string {
  const file = join(dir, "harness.mjs");
  writeFileSync(file, HARNESS);
  return file;
}

export interface ColdStart {
  ms: number;
  answer: unknown;
}

/** Runs `node args…` in a fresh process; ms from spawning it until it exited. Fails when it exits other than 0. */
export function timeNode(args: string[], env: Record<string, string> = {}): Promise<ColdStart> {
  return new Promise((ok, fail) => {
    let out = "";
    let err = "";
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", fail);
    child.on("exit", (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return fail(new Error(`node ${args.join(" ")} exited ${code}: ${err || out}`));
      const line = out.split("\n").find((l) => l.startsWith("@@answer "));
      ok({ ms, answer: line === undefined ? undefined : JSON.parse(line.slice("@@answer ".length)) });
    });
  });
}

/** One cold start of `fn` from its bundle: process start to its first answer (or, without a request, to its module loaded). */
export async function coldStart(fn: LambdaFunction, bundle: Bundle, harness: string): Promise<ColdStart> {
  const args = [harness, bundle.file, fn.export, ...(fn.request ? [JSON.stringify(fn.request.event)] : [])];
  const run = await timeNode(args, { ...LAMBDA_ENV, ...fn.env });
  const wrong = fn.request?.check(run.answer);
  if (wrong) throw new Error(`${fn.name}: ${wrong}`);
  return run;
}

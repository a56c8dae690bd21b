// Cold-start benchmark (`npm run bench:cold`): each Lambda function of stacks/ bundled as SST bundles it
// (test/support/lambda-bundles.ts), its size, and the time from process start to the answer of a first
// request that needs no DynamoDB, next to a bare Node start; checked against the budgets.
//
// Each function is built with esbuild into a temporary directory (bundle.mjs and its chunks, minified;
// its size is every .mjs file, what the function's zip holds, and apart what is loaded at start). A cold start is
// a fresh `node` process running a small harness that imports the bundle and invokes its handler once:
// the API with an API Gateway (HTTP API) event for GET /, a task function with planMemberChunks (its
// answer is computed from the input alone; with no lock owner runTask reads no load balancer); the jobs'
// bundle, whose every handler reads the table, is only loaded. Time runs from spawning the process until
// it exited (the harness exits as soon as it has the answer); a bare start is `node -e 0`, timed the same
// way. The runs go in rounds (every target once per round, the bare start five times, after one untimed
// round to warm the file cache) and each figure is the median of its runs, since this machine is shared
// and noisy.
//
// Then the AWS SDK: the API and the task function again with `@aws-sdk/*` left out of the bundle (as the
// Lambda runtime provides SDK v3), loaded instead from this repository's node_modules.
//
// Budgets: the API bundle ≤ 1 MiB and its cold start ≤ 8× a bare Node start timed in the same run (a
// ratio, so that it means the same on a faster or slower machine); every task function's bundle ≤ 1.75 MiB
// (the EC2 client is a chunk of about 0.55 MiB), of which ≤ 1 MiB loaded at start.
// The exit code is 1 when one is missed (after everything is printed).
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  FUNCTIONS,
  ROOT,
  bundleFunction,
  coldStart,
  packagesOf,
  timeNode,
  writeHarness,
  type Bundle,
  type LambdaFunction,
} from "../support/lambda-bundles";

const ROUNDS = 5;
/** The API's cold start may take this many times a bare Node start's (5.8–6.2× on the machine it was set on, idle). */
const API_OVER_BARE_RATIO = 8;
/** Bare starts timed per round: their median is the ratio's denominator, steadier with more samples. */
const BARE_PER_ROUND = 5;

const KiB = (bytes: number) => (bytes / 1024).toFixed(0);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Target {
  label: string;
  run: () => Promise<number>;
  /** Times per round (default 1): the bare start, a ratio's denominator, is sampled more (it takes ~40 ms). */
  repeat?: number;
}

/** Times every target `repeat` times per round (one untimed round first); the median of each target's times. */
async function timeRounds(targets: Target[]): Promise<Map<string, number>> {
  const times = new Map<string, number[]>(targets.map((t) => [t.label, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const t of targets) {
      for (let i = 0; i < (t.repeat ?? 1); i++) {
        const ms = await t.run();
        if (round > 0) times.get(t.label)!.push(ms);
      }
    }
  }
  return new Map([...times].map(([label, xs]) => [label, median(xs)]));
}

const dir = mkdtempSync(join(tmpdir(), "ottava-cold-"));
let failed = false;
try {
  const harness = writeHarness(dir);
  console.log(
    `Node ${process.version}; bundles as SST 4.17 builds them with the stacks' settings (esbuild, esm, platform node, es2023, keepNames, minified, split), in ${dir}`,
  );

  const bundled = new Map<LambdaFunction, Bundle>();
  for (const fn of FUNCTIONS) bundled.set(fn, await bundleFunction(fn, join(dir, fn.name.replace(/\W+/g, "-"))));

  // The SDK left to the runtime: the bundle resolves @aws-sdk/* from a node_modules next to it.
  const external = new Map<LambdaFunction, Bundle>();
  for (const fn of FUNCTIONS.filter((f) => f.name === "api" || f.name === "task")) {
    const out = join(dir, `${fn.name}-sdk-external`);
    const b = await bundleFunction(fn, out, { sdk: "external" });
    symlinkSync(join(ROOT, "node_modules"), join(out, "node_modules"), "dir");
    external.set(fn, b);
  }

  const bare = "node -e 0";
  const medians = await timeRounds([
    { label: bare, run: async () => (await timeNode(["-e", "0"])).ms, repeat: BARE_PER_ROUND },
    ...[...bundled].map(([fn, b]) => ({ label: fn.name, run: async () => (await coldStart(fn, b, harness)).ms })),
    ...[...external].map(([fn, b]) => ({ label: `${fn.name}, SDK external`, run: async () => (await coldStart(fn, b, harness)).ms })),
  ]);
  const bareMs = medians.get(bare)!;

  console.log(
    `\nCold start: process start to the first answer, median of ${ROUNDS} (${bare}: of ${ROUNDS * BARE_PER_ROUND}): ${bareMs.toFixed(0)} ms\n`,
  );
  console.log(
    "| function | first request | bundle (bytes) | KiB | loaded at start (KiB) | cold start (ms) | above bare Node (ms) | × bare Node | budget |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---|");
  const verdicts: string[] = [];
  for (const [fn, b] of bundled) {
    const ms = medians.get(fn.name)!;
    const checks: string[] = [];
    if (fn.maxBytes !== undefined) checks.push(b.bytes <= fn.maxBytes ? "size PASS" : "size FAIL");
    if (fn.maxBytesAtStart !== undefined) checks.push(b.bytesAtStart <= fn.maxBytesAtStart ? "start size PASS" : "start size FAIL");
    if (fn.name === "api") checks.push(ms <= API_OVER_BARE_RATIO * bareMs ? "time PASS" : "time FAIL");
    if (checks.some((c) => c.endsWith("FAIL"))) failed = true;
    const request = fn.name === "api" ? "GET /" : fn.request ? "planMemberChunks" : "(load only)";
    console.log(
      `| ${fn.name} | ${request} | ${b.bytes} | ${KiB(b.bytes)} | ${KiB(b.bytesAtStart)} | ${ms.toFixed(0)} | ${(ms - bareMs).toFixed(0)} | ${(ms / bareMs).toFixed(1)} | ${checks.join(", ") || "–"} |`,
    );
    verdicts.push(...checks.map((c) => `${fn.name}: ${c}`));
  }

  console.log("\nThe AWS SDK bundled, or left to the Lambda runtime (loaded from node_modules):\n");
  console.log("| function | SDK | bundle (bytes) | KiB | loaded at start (KiB) | cold start (ms) | above bare Node (ms) |");
  console.log("|---|---|---:|---:|---:|---:|---:|");
  for (const [fn, b] of external) {
    const own = bundled.get(fn)!;
    for (const [sdk, bundle, ms] of [
      ["bundled", own, medians.get(fn.name)!],
      ["external", b, medians.get(`${fn.name}, SDK external`)!],
    ] as const) {
      console.log(
        `| ${fn.name} | ${sdk} | ${bundle.bytes} | ${KiB(bundle.bytes)} | ${KiB(bundle.bytesAtStart)} | ${ms.toFixed(0)} | ${(ms - bareMs).toFixed(0)} |`,
      );
    }
  }

  console.log("\nWhat each function holds (KiB, largest first): loaded at start; in chunks loaded on first import\n");
  const top = (sizes: Map<string, number>, n: number) =>
    [...sizes]
      .sort((x, y) => y[1] - x[1])
      .slice(0, n)
      .map(([pkg, bytes]) => `${pkg} ${KiB(bytes)}`)
      .join(", ");
  for (const [fn, b] of bundled) {
    console.log(`${fn.name}: ${top(packagesOf(b.outputs.filter((o) => o.atStart)), 8)}`);
    console.log(`${" ".repeat(fn.name.length)}  chunks: ${top(packagesOf(b.outputs.filter((o) => !o.atStart)), 6)}`);
  }

  console.log(
    `\nBudgets: API ≤ 1 MiB and ≤ ${API_OVER_BARE_RATIO}× a bare Node start; every task function ≤ 1.75 MiB, of which ≤ 1 MiB loaded at start`,
  );
  for (const v of verdicts) console.log(`  ${v}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

// Offline synthesis of the AWS deployment: sst.config.ts's run() evaluated by SST 4.17.1's own components
// under Pulumi's unit-test mocks (test/support/synth/program.mjs, bundled as SST's CLI bundles sst.config.ts
// and run in a child process), with this process
// standing in for SST's CLI: it answers the CLI's RPC (SST_SERVER) — Provider.Aws.Bootstrap with a made-up
// asset bucket, Runtime.Build with a real esbuild build of the function's handler, as SST builds it.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions, type Loader } from "esbuild";
import { ensureSstPlatform } from "./sst-platform.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface SynthResource {
  type: string;
  /** The logical name. */
  name: string;
  id: string;
  inputs: Record<string, any>;
  state: Record<string, any>;
}

/** One Runtime.Build the deployment asked for: a function's handler, bundled. */
export interface SynthBuild {
  functionID: string;
  /** The handler as the function declares it, e.g. packages/api/src/lambda.handler. */
  handler: string;
  runtime: string;
  /** Source files in the bundle, relative to the repository. */
  inputs: string[];
  /** What the bundle exports. */
  exports: string[];
}

export interface Synthesis {
  app: Record<string, any>;
  outputs: Record<string, any>;
  resources: SynthResource[];
  calls: { token: string; inputs: Record<string, any> }[];
  builds: SynthBuild[];
}

/** A function's `nodejs` options (sst.aws.Function), as SST hands them to Runtime.Build. */
interface NodeOptions {
  loader?: Record<string, Loader>;
  install?: string[] | Record<string, string>;
  banner?: string;
  esbuild?: BuildOptions;
  minify?: boolean;
  format?: "esm" | "cjs";
  splitting?: boolean;
}

/**
 * How SST's CLI bundles the program it hands Pulumi (sst.config.ts, its run() and all they import), into
 * .sst/platform: esbuild, ESM for Node, every import bundled (the workspace packages from their
 * TypeScript, through their `exports`) but for these packages, which stay imports and resolve at run
 * time from beside the bundle (.sst/platform/node_modules, then the repository's). Source of truth: SST's
 * pkg/js/js.go (Build), and the 4.17.1 binary itself: `sst deploy` with SST_NO_CLEANUP=1 leaves the
 * bundle it built in .sst/platform/sst.config.<ms>.mjs, where @ottava/* are bundled and only these
 * packages and Node's built-ins are imports (see stacks/README.md). Left out, as they change no module's
 * loading: how SST provides its globals (defines for $app, $cli and $dev, the injected shim, a plugin
 * that adds `import * as aws from "@pulumi/aws"` and `sst` atop each file; the program sets them on
 * globalThis itself), its source maps and its metafile.
 */
const SST_EVAL_BUILD: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  mainFields: ["module", "main"],
  nodePaths: [join(root, ".sst", "platform", "node_modules")],
  external: ["@pulumi/*", "undici", "@pulumiverse/*", "@sst-provider/*", "@aws-sdk/*", "esbuild", "archiver", "glob", "vite"],
  banner: {
    js: [
      `import { createRequire as topLevelCreateRequire } from 'module';`,
      `const require = topLevelCreateRequire(import.meta.url);`,
      `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
      `const __filename = topLevelFileUrlToPath(import.meta.url)`,
      `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
    ].join("\n"),
  },
  logLevel: "silent",
};

/**
 * The handlers' bundles, shared by every synthesis of this process (the deploys of test/infra.test.ts run at
 * once): a bundle depends on its handler's file and the function's build options alone, never on the
 * deployer's settings, and SST only reads it (to zip it, adding its wrapper and copied files inside the
 * zip). Built once each, in one directory kept until the process exits.
 */
const bundles = new Map<string, Promise<{ out: string; inputs: string[]; exports: string[] }>>();
let bundleDir: string | undefined;
function bundlesDir(): string {
  if (bundleDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "ottava-synth-bundles-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    bundleDir = dir;
  }
  return bundleDir;
}

/** The extensions SST's Node.js runtime looks for behind a handler's file name. */
const HANDLER_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/**
 * Evaluates the deployment of `stage` with `env` as the deployer's environment (the OTTAVA_* settings and
 * SST_SECRET_* values `sst deploy` would see). Rejects when SST or the stacks throw, or a handler does not
 * build. Several may run at once, each in its own child process.
 */
export async function synthesize(env: Record<string, string>, stage = "synth"): Promise<Synthesis> {
  ensureSstPlatform();
  const work = mkdtempSync(join(tmpdir(), "ottava-synth-"));
  const program = join(root, ".sst", "platform", `${basename(work)}.mjs`);
  const builds: SynthBuild[] = [];

  /**
   * Runtime.Build: the handler's file bundled as SST bundles Node.js functions: esbuild, ESM and minified
   * unless the function's `nodejs` says otherwise (its loader, install, banner, minify, format, splitting
   * and esbuild options are honoured; `install`ed packages stay external, as SST installs them beside).
   */
  async function runtimeBuild(input: { functionID: string; handler: string; runtime: string; properties?: NodeOptions }) {
    const base = input.handler.slice(0, input.handler.lastIndexOf("."));
    const file = HANDLER_EXTENSIONS.map((ext) => base + ext).find((f) => existsSync(join(root, f)));
    if (!file) return { handler: input.handler, out: "", errors: [`Could not find file for handler "${input.handler}"`], sourcemaps: [] };
    const target = /^nodejs(\d+)\.x$/.exec(input.runtime)?.[1];
    if (!target)
      return { handler: input.handler, out: "", errors: [`${input.functionID}: not a Node.js runtime: ${input.runtime}`], sourcemaps: [] };
    const key = JSON.stringify([file, target, input.properties ?? {}]);
    if (!bundles.has(key))
      bundles.set(key, bundle(file, base, `node${target}`, input.properties ?? {}, join(bundlesDir(), `bundle-${bundles.size}`)));
    try {
      const made = await bundles.get(key)!;
      builds.push({
        functionID: input.functionID,
        handler: input.handler,
        runtime: input.runtime,
        inputs: made.inputs,
        exports: made.exports,
      });
      return { handler: input.handler, out: made.out, errors: [], sourcemaps: [] };
    } catch (e) {
      return { handler: input.handler, out: "", errors: [`${input.functionID}: ${(e as Error).message}`], sourcemaps: [] };
    }
  }

  async function bundle(file: string, base: string, target: string, nodejs: NodeOptions, out: string) {
    mkdirSync(out, { recursive: true });
    const format = nodejs.format ?? "esm";
    const outfile = join(out, `${base}.${format === "esm" ? "mjs" : "cjs"}`);
    const install = Array.isArray(nodejs.install) ? nodejs.install : Object.keys(nodejs.install ?? {});
    const ext = format === "esm" ? ".mjs" : ".cjs";
    const result = await build({
      absWorkingDir: root,
      entryPoints: [file],
      // As SST: one file, or with splitting an outdir (the entry named as that file, chunks beside it).
      ...(nodejs.splitting ? { outdir: out, entryNames: base, outExtension: { ".js": ext } } : { outfile }),
      bundle: true,
      platform: "node",
      format,
      target,
      minify: nodejs.minify ?? true,
      splitting: nodejs.splitting ?? false,
      mainFields: ["module", "main"],
      ...(nodejs.loader ? { loader: nodejs.loader } : {}),
      external: install,
      banner: {
        js: [
          format === "esm"
            ? `import { createRequire as topLevelCreateRequire } from "module"; const require = topLevelCreateRequire(import.meta.url);`
            : "",
          nodejs.banner ?? "",
        ].join("\n"),
      },
      ...nodejs.esbuild,
      metafile: true,
      logLevel: "silent",
    });
    const output = result.metafile.outputs[relative(root, outfile)];
    return { out, inputs: Object.keys(result.metafile.inputs), exports: output?.exports ?? [] };
  }

  const server = createServer(async (req, res) => {
    const { method, params } = JSON.parse(await body(req)) as { method: string; params: [any] };
    let reply: { result?: unknown; error?: string };
    if (method === "Provider.Aws.Bootstrap") {
      reply = {
        result: {
          asset: "sst-asset-synth",
          assetEcrRegistryId: "123456789012",
          assetEcrUrl: "123456789012.dkr.ecr.us-east-1.amazonaws.com/sst-asset",
          state: "sst-state-synth",
          appsyncHttp: "",
          appsyncRealtime: "",
        },
      };
    } else if (method === "Runtime.Build") {
      reply = { result: await runtimeBuild(params[0]) };
    } else {
      reply = { error: `rpc: can't find method ${method}` };
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: null, ...reply }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));

  try {
    await build({
      ...SST_EVAL_BUILD,
      absWorkingDir: root,
      entryPoints: [join(root, "test", "support", "synth", "program.mjs")],
      outfile: program,
    });
    const outFile = join(work, "synth.json");
    const childEnv: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? work,
      AWS_EC2_METADATA_DISABLED: "true",
      SST_SERVER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      OTTAVA_SYNTH_OUT: outFile,
      OTTAVA_SYNTH_WORK: work,
      OTTAVA_SYNTH_ROOT: root,
      OTTAVA_SYNTH_STAGE: stage,
      ...env,
    };
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done, fail) => {
      const child = spawn(process.execPath, [program], { cwd: root, env: childEnv, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.on("error", fail);
      child.on("exit", (code) => done({ code, stderr }));
    });
    if (!existsSync(outFile)) throw new Error(`the synthesis exited with ${code}:\n${stderr}`);
    const result = JSON.parse(readFileSync(outFile, "utf8")) as Omit<Synthesis, "builds"> & { errors: string[] };
    if (result.errors.length > 0) throw new Error(`the synthesis failed:\n${result.errors.join("\n")}`);
    if (code !== 0) throw new Error(`the synthesis exited with ${code}:\n${stderr}`);
    return { app: result.app, outputs: result.outputs, resources: result.resources, calls: result.calls, builds };
  } finally {
    server.close();
    rmSync(program, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    req.on("data", (chunk) => (data += chunk));
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });
}

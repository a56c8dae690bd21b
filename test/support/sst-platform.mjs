#!/usr/bin/env node
// SST's platform in .sst/platform: the TypeScript sources of SST's components and the Pulumi packages they
// run on (@pulumi/pulumi, @pulumi/aws at the versions SST pins), written by `sst install` of the sst package
// in devDependencies. `tsc -p stacks/tsconfig.json` checks the stacks against it, and test/infra.test.ts
// evaluates sst.config.ts with it. `npm test` runs this first.
//
// Offline but for the npm registry: SST_SKIP_DEPENDENCY_CHECK stops SST downloading Pulumi and bun from
// GitHub, and bun (the `bun` devDependency, whose path must be absolute) installs the platform's packages
// from the npm registry. Idempotent: a platform installed by this sst version is kept (a marker file says
// the install finished), so only the first run on a machine pays for it (a few seconds, ~340 MB).

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const platformDir = join(root, ".sst", "platform");
const marker = join(root, ".sst", "ottava-platform.json");

/** Installs .sst/platform unless this sst version's install is already there; answers its directory. */
export function ensureSstPlatform() {
  // sst's package.json exports no ./package.json: find the package by its folder.
  const sstDir = join(root, "node_modules", "sst");
  const version = JSON.parse(readFileSync(join(sstDir, "package.json"), "utf8")).version;
  if (installedVersion() === version) return platformDir;

  rmSync(marker, { force: true });
  const bun = join(dirname(createRequire(join(root, "package.json")).resolve("bun/package.json")), "bin", "bun.exe");
  const started = Date.now();
  const run = spawnSync(process.execPath, [join(sstDir, "bin", "sst.mjs"), "install", "--stage", "dev"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      ...process.env,
      SST_SKIP_DEPENDENCY_CHECK: "1",
      SST_TELEMETRY_DISABLED: "1",
      SST_BUN_PATH: bun,
      AWS_EC2_METADATA_DISABLED: "true",
    },
  });
  const platformVersion = existsSync(join(platformDir, "version")) ? readFileSync(join(platformDir, "version"), "utf8").trim() : undefined;
  if (run.status !== 0 || platformVersion !== version || !existsSync(join(platformDir, "node_modules", "@pulumi", "aws", "package.json"))) {
    throw new Error(`sst install did not write SST ${version}'s platform into ${platformDir} (exit ${run.status ?? run.signal})`);
  }
  writeFileSync(marker, JSON.stringify({ sst: version }) + "\n");
  console.log(`ottava: SST ${version}'s platform installed into .sst/platform (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  return platformDir;
}

function installedVersion() {
  try {
    const { sst } = JSON.parse(readFileSync(marker, "utf8"));
    return readFileSync(join(platformDir, "version"), "utf8").trim() === sst ? sst : undefined;
  } catch {
    return undefined;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    ensureSstPlatform();
  } catch (e) {
    console.error(`ottava: ${e.message}`);
    process.exit(1);
  }
}

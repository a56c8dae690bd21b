#!/usr/bin/env node
// Fetches AWS DynamoDB Local (DynamoDBLocal.jar + DynamoDBLocal_lib/) for `npm start`.
//
// The jar is taken from the npm tarball of `amplify-dynamodb-simulator`, which
// bundles it under `package/emulator/`. We only `npm pack` the tarball (no
// install, so none of its ~350 MB dependency tree) and extract that folder
// with the system `tar`.
//
// Destination: <repo>/node_modules/.cache/ottava/dynamodb-local, or
// $OTTAVA_DYNAMODB_LOCAL_DIR. Idempotent; the folder is staged next to the
// destination and renamed into place, so an interrupted run never leaves a
// half-extracted destination behind.
//
// Run by the root `postinstall` script and, on demand, by src/dynamodb-local.ts.

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_SPEC = "amplify-dynamodb-simulator@2.9.30";
const JAR = "DynamoDBLocal.jar";
const LIB = "DynamoDBLocal_lib";
const STAGING_PREFIX = ".dynamodb-local.tmp-";

const scriptDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(scriptDir, "..", "..", "..");
const defaultDest = join(repoRoot, "node_modules", ".cache", "ottava", "dynamodb-local");
const override = process.env.OTTAVA_DYNAMODB_LOCAL_DIR;
const dest = override ? resolve(override) : defaultDest;

class FetchError extends Error {}

/** Aborts the fetch; thrown so that the temp folders are still cleaned up. */
function fail(message) {
  throw new FetchError(message);
}

/** `npm` command that works from a plain shell and from inside an npm lifecycle script. */
function npmCommand() {
  const execPath = process.env.npm_execpath;
  if (execPath && /npm-cli\.c?js$/.test(execPath)) {
    return { cmd: process.execPath, prefix: [execPath], shell: false };
  }
  return { cmd: process.platform === "win32" ? "npm.cmd" : "npm", prefix: [], shell: process.platform === "win32" };
}

/** Removes staging folders left behind by interrupted runs (older than an hour, so a concurrent run is safe). */
function removeStaleStaging(parent) {
  let entries;
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of entries) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const p = join(parent, name);
    try {
      if (Date.now() - statSync(p).mtimeMs > 3_600_000) rmSync(p, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}

function main() {
  if (existsSync(join(dest, JAR))) return; // already there: stay quiet and fast

  const started = Date.now();
  const parent = dirname(dest);
  mkdirSync(parent, { recursive: true });
  removeStaleStaging(parent);

  // Both temp folders live next to the destination: the final rename stays on one
  // filesystem, and leftovers of an interrupted run are swept by removeStaleStaging().
  const downloadDir = mkdtempSync(join(parent, `${STAGING_PREFIX}pack-`));
  const staging = mkdtempSync(join(parent, STAGING_PREFIX));
  chmodSync(staging, 0o755); // mkdtemp creates 0700
  try {
    const npm = npmCommand();
    const pack = spawnSync(
      npm.cmd,
      [...npm.prefix, "pack", PACKAGE_SPEC, "--silent", "--pack-destination", npm.shell ? `"${downloadDir}"` : downloadDir],
      // --json or other npm_config_* inherited from an outer `npm install` may change
      // stdout, so the tarball is located by listing the folder rather than parsing it.
      { stdio: ["ignore", "pipe", "inherit"], shell: npm.shell, encoding: "utf8" },
    );
    if (pack.error) fail(`could not run npm (${pack.error.message})`);
    if (pack.status !== 0) fail(`\`npm pack ${PACKAGE_SPEC}\` exited with ${pack.status ?? pack.signal}`);
    const tarball = readdirSync(downloadDir).find((f) => f.endsWith(".tgz"));
    if (!tarball) fail(`\`npm pack ${PACKAGE_SPEC}\` produced no tarball`);

    const tar = spawnSync("tar", ["-xzf", join(downloadDir, tarball), "-C", staging, "--strip-components=2", "package/emulator"], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (tar.error) fail(`could not run tar (${tar.error.message})`);
    if (tar.status !== 0) fail(`tar exited with ${tar.status ?? tar.signal}`);
    if (!existsSync(join(staging, JAR)) || !existsSync(join(staging, LIB))) {
      fail(`${PACKAGE_SPEC} no longer contains emulator/${JAR} and emulator/${LIB}/`);
    }

    if (existsSync(join(dest, JAR))) return; // a concurrent run finished first
    if (existsSync(dest)) {
      if (dest === defaultDest || readdirSync(dest).length === 0) {
        rmSync(dest, { recursive: true, force: true });
      } else {
        fail(`${dest} exists but has no ${JAR}; remove it or point OTTAVA_DYNAMODB_LOCAL_DIR elsewhere`);
      }
    }
    renameSync(staging, dest);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`ottava: DynamoDB Local fetched into ${dest} (${seconds}s)`);
  } finally {
    rmSync(downloadDir, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true }); // no-op after a successful rename
  }
}

try {
  main();
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`ottava: could not fetch DynamoDB Local: ${message}`);
  console.error(
    `ottava: \`npm start\` needs it; retry with \`node ${join("packages", "local", "scripts", basename(fileURLToPath(import.meta.url)))}\`` +
      " (needs the npm registry and `tar`).",
  );
  process.exitCode = 1;
}

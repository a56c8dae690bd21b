// Core does no I/O (docs/architecture.md): it depends on zod alone, and its sources import nothing but
// each other, zod and the few Node modules that compute without touching the network, the disk or
// another process. What talks to the outside is a port here and an adapter at the edge (@ottava/edge,
// @ottava/db, @ottava/amphora, …).
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;
/** Node's modules core may use: hashes, HMACs, UUIDs, certificate parsing (crypto) and the heartbeats' compression (zlib). */
const NODE_ALLOWED = new Set(["node:crypto", "node:zlib"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every module specifier of a source: static imports and re-exports, dynamic import() and require(). */
function specifiers(text: string): string[] {
  const found = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/(?<![.\w$])(?:import|require)\s*\(\s*["'`]([^"'`]+)["'`]/g),
  ];
  return found.map((m) => m[1]!);
}

const allowed = (spec: string) => spec.startsWith("./") || spec.startsWith("../") || spec === "zod" || NODE_ALLOWED.has(spec);

describe("core", () => {
  it("depends on zod only", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(["zod"]);
    expect(pkg.devDependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies ?? {}).toEqual({});
  });

  it("imports only its own modules, zod and Node modules that do no I/O, and calls no fetch", () => {
    const files = sources(join(root, "src"));
    expect(files.length).toBeGreaterThan(50);
    const offending: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const name = relative(root, file);
      for (const spec of specifiers(text)) if (!allowed(spec)) offending.push(`${name} imports ${spec}`);
      // Dynamic imports whose module is computed cannot be checked: there are none (a computed require
      // would need node:module's createRequire in ESM, which is no allowed import).
      if (/(?<![.\w$])import\s*\(\s*[^"'`\s)]/.test(text)) offending.push(`${name} imports a computed module`);
      if (/\bfetch\s*\(/.test(text)) offending.push(`${name} calls fetch`);
    }
    expect(offending).toEqual([]);
  });

  it("finds what it looks for (the checks above are not vacuous)", () => {
    expect(specifiers('import { z } from "zod";\nimport type { X } from "./x";\nexport * from "../y";')).toEqual(["zod", "./x", "../y"]);
    expect(specifiers('import {\n  a,\n  b,\n} from "node:fs";\nimport "node:net";\nconst m = await import("node:http");')).toEqual([
      "node:fs",
      "node:net",
      "node:http",
    ]);
    // A method is no import: `tree.require("pool", id, "Pool")`, `loader.import("x")`.
    expect(specifiers('const pool = tree.require("pool", poolId, "Pool");\nloader.import("x");')).toEqual([]);
    for (const spec of ["node:fs", "fs", "node:net", "node:http", "node:child_process", "node:dgram", "@aws-sdk/client-ssm"])
      expect(allowed(spec), spec).toBe(false);
  });
});

// The deploy program (sst.config.ts and stacks/) reaches the packages only by their names, through the
// entries they export for it (`@ottava/controller/flows`, `@ottava/db/table`, `@ottava/core/constants`,
// ...), which SST's CLI bundles from their TypeScript (stacks/README.md): never by a relative path into
// packages/*/src.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

describe("the deploy program", () => {
  it("imports the packages by name only: every file it reaches by path is sst.config.ts or in stacks/", async () => {
    // Packages stay imports (`packages: "external"`): what the bundle takes in was reached by a path.
    const { metafile } = await build({
      absWorkingDir: root,
      entryPoints: ["sst.config.ts"],
      bundle: true,
      write: false,
      outfile: "deploy.mjs",
      platform: "node",
      format: "esm",
      packages: "external",
      metafile: true,
      logLevel: "silent",
    });
    const files = Object.keys(metafile.inputs);
    expect(files.filter((f) => f !== "sst.config.ts" && !/^stacks\/[^/]+\.ts$/.test(f))).toEqual([]);
    // The check is real: it sees the stacks, and the packages they import by name.
    expect(files).toContain("stacks/flows.ts");
    const packages = new Set(Object.values(metafile.inputs).flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path)));
    expect([...packages].filter((p) => p.startsWith("@ottava/")).sort()).toEqual([
      "@ottava/controller/flows",
      "@ottava/core/constants",
      "@ottava/db/table",
    ]);
  });
});

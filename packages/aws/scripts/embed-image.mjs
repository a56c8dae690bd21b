// Writes packages/aws/src/compute/image-files.ts: the files of packages/aws/image/ (the amphora image
// scripts) as a module, which the first-boot user data embeds. A module, not a file read at run time:
// it works alike under vitest, under tsx (npm start) and in the esbuild bundles of the Lambda functions.
// Run it after changing packages/aws/image/: `node packages/aws/scripts/embed-image.mjs`.
// packages/aws/test/image-files.test.ts fails when the module and the files differ.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const IMAGE_DIR = join(pkg, "image");
export const MODULE_PATH = join(pkg, "src/compute/image-files.ts");

/** The module's text for the files of `dir` (none when it does not exist), formatted as the repository formats it. */
export async function imageFilesModule(dir = IMAGE_DIR) {
  const names = existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => statSync(join(dir, n)).isFile())
        .sort()
    : [];
  const entries = names.map((name) => {
    const executable = (statSync(join(dir, name)).mode & 0o111) !== 0;
    const content = readFileSync(join(dir, name), "utf8");
    return `  {\n    name: ${JSON.stringify(name)},\n    executable: ${executable},\n    content: ${JSON.stringify(content)},\n  },\n`;
  });
  const text = [
    "// Generated from packages/aws/image/ by packages/aws/scripts/embed-image.mjs: do not edit, run it again.",
    'import type { ImageFile } from "./user-data";',
    "",
    "/** The amphora image scripts (packages/aws/image/), which the first-boot user data carries. */",
    `export const IMAGE_FILES: readonly ImageFile[] = [${entries.length ? `\n${entries.join("")}` : ""}];`,
    "",
  ].join("\n");
  return prettier.format(text, { ...(await prettier.resolveConfig(MODULE_PATH)), filepath: MODULE_PATH });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(MODULE_PATH, await imageFilesModule());
  console.log(`wrote ${MODULE_PATH}`);
}

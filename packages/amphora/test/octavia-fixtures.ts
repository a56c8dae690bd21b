// What the renderers' tests share: reading a fixture that a generator beside it wrote with Octavia's own
// templaters, and the whitespace normalization their comparisons allow (nothing else).
import { readFileSync } from "node:fs";

/** A fixture of packages/amphora/test/fixtures/, parsed. */
export const readFixture = <T>(file: string): T => JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), "utf8")) as T;

/** Whitespace-normalized: each line trimmed, runs of blanks one space, blank lines dropped. */
export const normalize = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim().replace(/[ \t]+/g, " "))
    .filter(Boolean)
    .join("\n");

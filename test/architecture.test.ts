// docs/architecture.md's "Where each rule lives": every row's file exists and defines every name the row
// gives, so the table a newcomer reads cannot point at a rule that moved or was renamed.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const HEADING = "## Where each rule lives";

interface Row {
  rule: string;
  file: string;
  names: string[];
}

/** The table's rows: rule | `file` | `name`, `name`, ... */
function rows(): Row[] {
  const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
  const start = doc.indexOf(HEADING);
  if (start < 0) throw new Error(`docs/architecture.md has no "${HEADING}"`);
  const section = doc.slice(start + HEADING.length).split(/\n## /)[0]!;
  const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  return section
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|[-| ]+\|$/.test(line))
    .slice(1) // the header
    .map((line) => {
      const [rule, file, names] = line.split("|").slice(1, -1);
      const files = ticked(file ?? "");
      if (files.length !== 1) throw new Error(`a row names one file: ${line}`);
      return { rule: rule!.trim(), file: files[0]!, names: ticked(names ?? "") };
    });
}

/** Does TypeScript `source` define `name`: a declaration (exported or not), or a class member? */
function defines(source: string, name: string): boolean {
  const declaration = new RegExp(
    String.raw`^\s*(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(function\*?|const|let|var|class|interface|type|enum)\s+${name}\b`,
    "m",
  );
  const member = new RegExp(String.raw`^\s*((private|protected|public|static|readonly|async)\s+)*${name}\s*[(<:=]`, "m");
  return declaration.test(source) || member.test(source);
}

describe("docs/architecture.md, where each rule lives", () => {
  const table = rows();

  it("covers the rules a newcomer looks for", () => {
    expect(table.length).toBeGreaterThanOrEqual(40);
    for (const subject of ["status", "lock", "validation", "quota", "policy", "rendering", "flows", "drivers"])
      expect(
        table.some((r) => r.rule.includes(subject)),
        subject,
      ).toBe(true);
  });

  it.each(table.map((r) => [r.rule, r] as const))("%s: its file defines every name", (_, row) => {
    const path = join(root, row.file);
    expect(existsSync(path), `${row.file} does not exist`).toBe(true);
    const source = readFileSync(path, "utf8");
    expect(row.names.length, `${row.rule} names nothing`).toBeGreaterThan(0);
    expect(row.names.filter((n) => !defines(source, n))).toEqual([]);
  });

  it("tells a definition from a mere use", () => {
    expect(defines("export const MUTABLE_STATUSES = statusSet(ACTIVE);", "MUTABLE_STATUSES")).toBe(true);
    expect(defines("  private lockUpdate(id: string) {", "lockUpdate")).toBe(true);
    expect(defines("import { MUTABLE_STATUSES } from './constants';\nrequireStatus(x, MUTABLE_STATUSES);", "MUTABLE_STATUSES")).toBe(false);
  });
});

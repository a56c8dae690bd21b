// What other packages' tests share from core (@ottava/core/testing): the fault a call throws, records,
// and the values recorded from Octavia's own code (test/fixtures, each with the script that made it).
import { readFileSync } from "node:fs";

export * from "./faults";
export * from "./python";
export * from "./records";

/** A fixture of test/fixtures (JSON), parsed. */
export const octaviaFixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));

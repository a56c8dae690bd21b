// What this test process writes on stdout and stderr (Powertools' logger and metrics write there,
// through their own Console on the process's streams): from captureOutput() to the end of the
// calling test, every line is kept, and not printed.
import { onTestFinished, vi } from "vitest";

type Write = typeof process.stdout.write;
const sinks = new Set<string[]>();
const partial = { stdout: "", stderr: "" };
let originals: { stdout: Write; stderr: Write } | undefined;

function intercept(name: "stdout" | "stderr", original: Write): Write {
  return function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    if (sinks.size === 0) return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    const text = partial[name] + (typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString());
    const lines = text.split("\n");
    partial[name] = lines.pop()!;
    for (const sink of sinks) sink.push(...lines);
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  } as Write;
}

/** The lines this process writes on stdout and stderr until the calling test ends (call it inside a test). */
export function captureOutput(): string[] {
  if (!originals) {
    originals = { stdout: process.stdout.write, stderr: process.stderr.write };
    process.stdout.write = intercept("stdout", originals.stdout);
    process.stderr.write = intercept("stderr", originals.stderr);
  }
  const lines: string[] = [];
  sinks.add(lines);
  onTestFinished(() => {
    sinks.delete(lines);
  });
  return lines;
}

/** The lines that are JSON objects, parsed. */
export function jsonLines(lines: string[]): Record<string, any>[] {
  return lines.flatMap((l) => {
    if (!l.startsWith("{")) return [];
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
}

/** An Embedded Metric Format line, parsed. */
export interface EmfLine {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

/**
 * Metrics on (vitest.config.ts turns them off for the suite) and the output captured, until the
 * calling test ends; `emitted(name)` answers the EMF lines written so far that carry metric `name`.
 */
export function captureMetrics(): { lines: string[]; emitted(name: string): EmfLine[] } {
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "false");
  onTestFinished(() => {
    vi.unstubAllEnvs();
  });
  const lines = captureOutput();
  return {
    lines,
    emitted: (name) =>
      jsonLines(lines).filter(
        (l): l is EmfLine =>
          Array.isArray(l._aws?.CloudWatchMetrics) &&
          l._aws.CloudWatchMetrics.some((m: EmfLine["_aws"]["CloudWatchMetrics"][number]) => m.Metrics.some((x) => x.Name === name)),
      ),
  };
}

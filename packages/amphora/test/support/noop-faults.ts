// The no-op drivers with injected faults and latency (@ottava/amphora/testing/noop-faults), for tests
// and demonstrations: npm start's OTTAVA_NOOP_FAULTS (chosen calls fail) and OTTAVA_NOOP_LATENCY
// (chosen calls take time, as a real cloud's do). A process gives them to createDrivers (its `noop`
// option) or to createTaskContext; nothing of the product imports this file, so no Lambda bundle
// carries it. It loads no vitest, and only the no-op drivers' module of this package (npm start reads
// its settings before it loads the rest).
import { DriverError, type Drivers } from "@ottava/core";
import { noopDrivers } from "../../src/noop";

/**
 * Parses a "driver.method[:N],..." list naming no-op driver calls (OTTAVA_NOOP_FAULTS, OTTAVA_NOOP_LATENCY);
 * a name without :N maps to `fallback`.
 */
export function parseCallList(setting: string, spec: string, fallback = Infinity): Map<string, number> {
  const calls = new Map<string, number>();
  const drivers = noopDrivers() as unknown as Record<string, object>;
  for (const part of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(compute|network|amphora)\.([A-Za-z]+)(?::(\d+))?$/.exec(part);
    if (!m) throw new Error(`${setting}: '${part}' is not driver.method[:N] (drivers: compute, network, amphora)`);
    if (!(m[2]! in drivers[m[1]!]!)) throw new Error(`${setting}: ${m[1]} has no method '${m[2]}'`);
    calls.set(`${m[1]}.${m[2]}`, m[3] === undefined ? fallback : Number(m[3]));
  }
  return calls;
}

/** OTTAVA_NOOP_FAULTS: each named call fails (always, or its first N calls). Counts are per set of drivers. */
export const parseFaults = (spec: string) => parseCallList("OTTAVA_NOOP_FAULTS", spec);

/** OTTAVA_NOOP_LATENCY: each named call takes N milliseconds, as a real cloud's calls take time. */
export const parseLatency = (spec: string) => parseCallList("OTTAVA_NOOP_LATENCY", spec, 0);

function wrap<T extends object>(name: string, driver: T, faults: Map<string, number>, latency: Map<string, number>): T {
  const wrapped = {} as Record<string, unknown>;
  for (const [method, fn] of Object.entries(driver)) {
    const key = `${name}.${method}`;
    wrapped[method] = async (...args: unknown[]) => {
      const ms = latency.get(key);
      if (ms) await new Promise((r) => setTimeout(r, ms));
      const left = faults.get(key);
      if (left !== undefined && left > 0) {
        faults.set(key, left - 1);
        throw new DriverError(`Injected fault: ${key} (OTTAVA_NOOP_FAULTS)`);
      }
      return (fn as (...a: unknown[]) => unknown)(...args);
    };
  }
  return wrapped as T;
}

/** The no-op drivers, their calls failing as `faultSpec` says (OTTAVA_NOOP_FAULTS) and taking the time `latencySpec` says (OTTAVA_NOOP_LATENCY). */
export function noopDriversWith(faultSpec = "", latencySpec = ""): Drivers {
  const faults = parseFaults(faultSpec);
  const latency = parseLatency(latencySpec);
  const noop = noopDrivers();
  return {
    compute: wrap("compute", noop.compute, faults, latency),
    network: wrap("network", noop.network, faults, latency),
    amphora: wrap("amphora", noop.amphora, faults, latency),
    certificates: noop.certificates,
  };
}

// What the benchmarks share: their command-line options (after `npm run bench:<name> --`), a pause, and percentiles.
// They run under plain node (tsx): nothing here loads vitest (@ottava/*/testing does).

/** The VIP subnet of the benchmarks' load balancers (the tests' SUBNET, @ottava/core/testing; the noop network driver takes any). */
export const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";

/** The value of `--name value` or `--name=value`; undefined when not given. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

/** Whether `--name` is given. */
export const flag = (name: string) => process.argv.includes(`--${name}`);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The listeners of a fully populated load balancer create: `pools` HTTP listener/pool pairs (listener-i
 * on port 8000 + i, its default pool pool-i, round robin), pool i with the members `membersOf(i)`.
 */
export const listenersWithPools = (pools: number, membersOf: (i: number) => { address: string; protocol_port: number }[]) =>
  Array.from({ length: pools }, (_, i) => ({
    name: `listener-${i}`,
    protocol: "HTTP",
    protocol_port: 8000 + i,
    default_pool: { name: `pool-${i}`, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: membersOf(i) },
  }));

/** The q-th quantile (0..1) of `xs`, nearest rank; NaN for none. */
export const pct = (xs: number[] | undefined, q: number) => {
  if (!xs?.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};

/**
 * A check a benchmark makes of its figures. A budget fails the run when it is missed; a retired target
 * (`retired`: why it is no longer enforced) is still measured and printed with its figure and ratio, but
 * never fails the run.
 */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  retired?: string;
}

/** The checks as lines (`PASS`, `FAIL`, or `INFO` for a retired target), then a summary; `missed` counts the budgets missed. */
export function checkLines(checks: Check[], noun = "budgets"): { lines: string[]; missed: number } {
  const lines = checks.map((c) =>
    c.retired
      ? `  INFO  ${c.name} (retired: ${c.retired}; ${c.ok ? "met" : "not met"}): ${c.detail}`
      : `  ${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`,
  );
  const enforced = checks.filter((c) => !c.retired);
  const missed = enforced.filter((c) => !c.ok).length;
  lines.push("", missed ? `${missed} of ${enforced.length} ${noun} missed.` : `All ${enforced.length} ${noun} met.`);
  return { lines, missed };
}

// The record of the EC2 and Secrets Manager actions each workload of Ottava calls, which the IAM grants are
// checked against (test/infra.test.ts: each role's actions equal its functions' record). Every AWS call the
// product signs names its workload in its User-Agent (`ottava/<task>`, `ottava/api`, `ottava/SweepOrphans`,
// `ottava/health-manager`, and the amphora's configure step `ottava/amphora`: @ottava/edge workload.ts).
// The files that run the AWS drivers against moto (the EC2 test bed, the flows on the EC2 test proxy, the
// orphan sweep, the certificate manager, the CLI on the vpc driver) gather what their run called, by
// workload, and check it against the committed record, test/fixtures/aws-calls.json: a call the record
// lacks fails the file, naming it. Calls with no workload (the test's own, `npm run cert`'s store used to
// seed certificates) are not a role's and are left out.
//
// Regenerating the record: RECORD_AWS_CALLS=1 runs those files and merges their calls into the file
// instead of checking (one file at a time: npx vitest run --no-file-parallelism <files>); to drop actions
// no longer called, empty the file to {} first and run all of them:
//   echo '{}' > test/fixtures/aws-calls.json
//   RECORD_AWS_CALLS=1 npx vitest run --no-file-parallelism test/ec2-bed.e2e.test.ts test/cli-vpc.e2e.test.ts \
//     packages/controller/test/ec2-flows.test.ts packages/controller/test/sweep.test.ts packages/api/test/certs-secretsmanager.test.ts
import { readFileSync, writeFileSync } from "node:fs";
import type { Ec2Proxy } from "./ec2-proxy";
import type { Moto } from "./moto";

/** workload → its IAM actions ("ec2:RunInstances", "secretsmanager:GetSecretValue"), sorted. */
export type AwsCallRecord = Record<string, string[]>;

/** The committed record. */
export const AWS_CALLS_FILE = new URL("../../../../test/fixtures/aws-calls.json", import.meta.url).pathname;

/** The workload a User-Agent names (`ottava/<workload>` among its tokens), if any. */
export const workloadOf = (userAgent: string): string | undefined => /(?:^|\s)ottava\/([\w.-]+)/.exec(userAgent)?.[1];

/**
 * What Ottava's workloads called in a file's run: EC2 through the proxy (`proxy.history`, every call
 * since it started) or, without one, moto's EC2 requests; Secrets Manager from moto's recorder (started
 * with `moto.record()` before the run).
 */
export async function recordedAwsCalls(src: { moto: Moto; proxy?: Ec2Proxy }): Promise<AwsCallRecord> {
  const calls: { userAgent: string; action: string }[] = [];
  if (src.proxy) calls.push(...src.proxy.history.map((c) => ({ userAgent: c.userAgent, action: `ec2:${c.action}` })));
  for (const r of await src.moto.recorded()) {
    if (r.target?.startsWith("secretsmanager.")) calls.push({ userAgent: r.userAgent, action: `secretsmanager:${r.target.slice(15)}` });
    else if (!src.proxy && !r.target && r.params.Action && r.params.Version === "2016-11-15")
      calls.push({ userAgent: r.userAgent, action: `ec2:${r.params.Action}` });
  }
  const record: Record<string, Set<string>> = {};
  for (const { userAgent, action } of calls) {
    const workload = workloadOf(userAgent);
    if (workload) (record[workload] ??= new Set()).add(action);
  }
  return sorted(Object.fromEntries(Object.entries(record).map(([w, a]) => [w, [...a]])));
}

const sorted = (r: AwsCallRecord): AwsCallRecord =>
  Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((w) => [w, [...new Set(r[w])].sort()]),
  );

export const readAwsCallRecord = (): AwsCallRecord => JSON.parse(readFileSync(AWS_CALLS_FILE, "utf8")) as AwsCallRecord;

/**
 * The calls of this run that the committed record lacks ("<workload> <action>"), none when it holds them
 * all; with RECORD_AWS_CALLS=1 the run's calls are merged into the file instead, and none are reported.
 */
export function awsCallsMissingFromRecord(run: AwsCallRecord): string[] {
  const committed = readAwsCallRecord();
  if (process.env.RECORD_AWS_CALLS === "1") {
    const merged: AwsCallRecord = { ...committed };
    for (const [w, actions] of Object.entries(run)) merged[w] = [...(merged[w] ?? []), ...actions];
    writeFileSync(AWS_CALLS_FILE, `${JSON.stringify(sorted(merged), null, 2)}\n`);
    return [];
  }
  return Object.entries(run).flatMap(([w, actions]) => actions.filter((a) => !committed[w]?.includes(a)).map((a) => `${w} ${a}`));
}

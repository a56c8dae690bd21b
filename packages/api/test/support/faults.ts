// What the DynamoDB-fault tests share (dynamo-faults.test.ts, dynamo-faults-flows.test.ts): objects made
// through an app without faults, and the check that a faulted change left nothing held.
import { expect } from "vitest";
import type { inProcessApp } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;

export const LBS = "/v2/lbaas/loadbalancers";

/** No lock held and nothing PENDING_* in the LB's tree (amphorae aside); answers the tree. */
export async function nothingHeld(app: App, lbId: string) {
  const { lb, items } = await app.store.tree(lbId);
  expect(lb!.lockOwner).toBeUndefined();
  const pending = [{ kind: "loadbalancer", record: lb!.record as unknown as Record<string, unknown> }, ...items]
    .filter((i) => i.kind !== "amphora" && String(i.record.provisioning_status).startsWith("PENDING_"))
    .map((i) => `${i.kind} ${String(i.record.provisioning_status)}`);
  expect(pending).toEqual([]);
  return { lb: lb!, items };
}

/** The load balancer's newest flow trail entry. */
export const newestFlow = async (app: App, lbId: string) => (await app.trail.flowTrail(lbId, 1))[0]!;

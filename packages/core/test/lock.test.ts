// The one lock loop (services/lock.ts lockedStart) against an in-memory store: what it writes with the
// lock, how it names the execution, how often it decides again, what a refused lock answers, and the
// give-back when the work before the start fails. The same guarantees run against DynamoDB Local in
// packages/api/test (dynamo-faults, flow-trail, crosspool) and the race tests.
import { describe, expect, it } from "vitest";
import {
  lockAndStart,
  lockedStart,
  LockConflict,
  markUnavailable,
  MUTABLE_STATUSES,
  type FlowEnd,
  type LoadBalancer,
  type LockDeps,
  type LockRequest,
  type Versioned,
} from "../src";

const LB = "lb-1";
const versioned = (status: string, version: number): Versioned<LoadBalancer> => ({
  record: { id: LB, project_id: "p", name: "before", provisioning_status: status } as LoadBalancer,
  version,
  lockOwner: undefined,
  executionArn: undefined,
});

/** A logger that writes nothing (core's tests have no logger adapter: @ottava/edge's depends on core). */
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** A store whose first `conflicts` locks are refused, each finding the LB as `found(n)` (the n-th refusal). */
function fake(conflicts = 0, found: (n: number) => Versioned<LoadBalancer> | undefined = (n) => versioned("ACTIVE", 3 + n)) {
  const locks: LockRequest[] = [];
  const given: Partial<LoadBalancer>[] = [];
  const ends: FlowEnd[] = [];
  const started: { flow: string; name: string; input: Record<string, unknown> }[] = [];
  let refused = 0;
  const deps = {
    store: {
      getLoadBalancer: async () => versioned("ACTIVE", 3),
      lockWith: async (_id: string, req: LockRequest) => {
        locks.push(req);
        if (refused < conflicts) throw new LockConflict(found(++refused));
      },
      abandonLock: async (_id: string, _owner: string, restore: Partial<LoadBalancer>) => void given.push(restore),
      applyAsOwner: async () => undefined,
    },
    trail: { recordFlowEnd: async (_lb: string, _e: string, end: FlowEnd) => void ends.push(end) },
    engine: {
      executionArn: (flow: string, name: string) => `arn:${flow}:${name}`,
      start: async (flow: string, name: string, input: Record<string, unknown>) => {
        started.push({ flow, name, input });
        return { executionArn: `arn:${flow}:${name}` };
      },
    },
    log: silent,
    metrics: { count: () => {}, timing: () => {} },
  } as unknown as LockDeps;
  return { deps, locks, given, ends, started };
}

const update = { lbId: LB, flow: "loadbalancer-update", verb: "update", from: MUTABLE_STATUSES, to: "PENDING_UPDATE" };

describe("the lock loop", () => {
  it("takes the lock on the version read, for the execution named after the next version, and starts it with the trail's start in the lock", async () => {
    const f = fake();
    await lockAndStart(f.deps, { ...update, prepare: () => ({ name: "after" }), input: { extra: 1 } });
    expect(f.locks).toHaveLength(1);
    expect(f.locks[0]).toMatchObject({
      from: MUTABLE_STATUSES,
      to: "PENDING_UPDATE",
      owner: `update-${LB}-v4`,
      executionArn: `arn:loadbalancer-update:update-${LB}-v4`,
      expectVersion: 3,
      set: { name: "after" },
      trail: { flow: "loadbalancer-update", execution: `update-${LB}-v4`, subject: [{ kind: "loadbalancer", id: LB }] },
    });
    expect(f.started).toEqual([
      {
        flow: "loadbalancer-update",
        name: `update-${LB}-v4`,
        input: { lbId: LB, owner: `update-${LB}-v4`, subject: [{ kind: "loadbalancer", id: LB }], changes: expect.anything(), extra: 1 },
      },
    ]);
  });

  it("decides again on the LB a refused lock found, 5 attempts in all, then answers 409", async () => {
    const f = fake(99);
    await expect(lockAndStart(f.deps, update)).rejects.toMatchObject({
      status: 409,
      message: `Load Balancer ${LB} is immutable and cannot be updated.`,
    });
    expect(f.locks.map((l) => [l.owner, l.expectVersion])).toEqual([3, 4, 5, 6, 7].map((v) => [`update-${LB}-v${v + 1}`, v]));
    expect(f.started).toEqual([]);
  });

  it("goes through once the LB stops changing", async () => {
    const f = fake(2);
    await lockAndStart(f.deps, update);
    expect(f.locks.map((l) => l.expectVersion)).toEqual([3, 4, 5]);
    expect(f.started.map((s) => s.name)).toEqual([`update-${LB}-v6`]);
  });

  it("answers 409 at once when the LB is found busy, 404 when it is gone or DELETED", async () => {
    await expect(lockAndStart(fake(1, () => versioned("PENDING_UPDATE", 4)).deps, update)).rejects.toMatchObject({ status: 409 });
    await expect(lockAndStart(fake(1, () => versioned("DELETED", 4)).deps, update)).rejects.toMatchObject({
      status: 404,
      message: `Load Balancer ${LB} not found.`,
    });
    await expect(lockAndStart(fake(1, () => undefined).deps, update)).rejects.toMatchObject({ status: 404 });
  });

  it("runs the work before the start under the lock, with the execution's name, and adds its answer to the flow's input", async () => {
    const f = fake();
    const order: string[] = [];
    await lockedStart(f.deps, LB, async () => ({
      read: versioned("ACTIVE", 7),
      flow: "member-cross-pool-update",
      from: MUTABLE_STATUSES,
      to: "PENDING_UPDATE",
      subject: { kind: "loadbalancer", id: LB },
      restore: { provisioning_status: "ACTIVE" },
      input: { changes: {} },
      beforeStart: async (execution) => {
        order.push(`before ${execution} after ${f.locks.length} lock`);
        return { chunks: 2 };
      },
    }));
    expect(order).toEqual([`before member-cross-pool-update-${LB}-v8 after 1 lock`]);
    expect(f.started[0]!.input).toMatchObject({ changes: {}, chunks: 2 });
  });

  it("gives the lock back when the work before the start fails: no flow, the trail's entry FAILED, a 500 (the error itself when unavailable)", async () => {
    for (const [error, answer] of [
      [new Error("boom"), { status: 500, message: "Provider 'amphora' reports error: the controller could not start the flow." }],
      [
        markUnavailable(Object.assign(new Error("down"), { name: "ServiceUnavailable", $metadata: { httpStatusCode: 503 } })),
        { message: "down" },
      ],
    ] as const) {
      const f = fake();
      const plan = {
        read: versioned("ACTIVE", 1),
        flow: "member-cross-pool-update",
        from: MUTABLE_STATUSES,
        to: "PENDING_UPDATE",
        subject: { kind: "loadbalancer", id: LB },
        restore: { provisioning_status: "ACTIVE" },
        input: {},
        beforeStart: async () => Promise.reject(error),
      };
      await expect(lockedStart(f.deps, LB, async () => plan)).rejects.toMatchObject(answer);
      expect(f.started).toEqual([]);
      expect(f.given).toEqual([{ provisioning_status: "ACTIVE" }]);
      expect(f.ends).toMatchObject([{ outcome: "FAILED", reason: "the execution could not be started" }]);
    }
  });
});

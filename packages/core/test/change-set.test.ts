// A flow's change set: grouped by kind, pool and end state, so a flow's input stays small whatever a
// batch names; expanded back object by object as the flow finishes.
import { describe, expect, it } from "vitest";
import { changeRefs, changeSetOf, Tree, withRefs, type ChildWrite, type LoadBalancer } from "../src";

const lb = { id: "lb", project_id: "p", provisioning_status: "ACTIVE" } as unknown as LoadBalancer;
const member = (i: number) => ({
  id: `m${String(i).padStart(4, "0")}`,
  pool_id: "pool-1",
  project_id: "p",
  created_at: "t",
  provisioning_status: "PENDING_CREATE",
});

describe("changeSetOf", () => {
  it("groups a 2,000-member batch into a few groups of ids (small enough for a Step Functions input) and expands it back", () => {
    const writes: ChildWrite[] = [
      ...Array.from({ length: 1000 }, (_, i) => ({ kind: "member", put: member(i) })),
      ...Array.from({ length: 1000 }, (_, i) => ({
        kind: "member",
        id: `d${i}`,
        pool_id: "pool-1",
        set: { provisioning_status: "PENDING_DELETE" },
      })),
      { kind: "pool", id: "pool-1", set: { provisioning_status: "PENDING_UPDATE" } },
    ];
    const tree = new Tree(lb, [
      { kind: "pool", record: { id: "pool-1", provisioning_status: "PENDING_UPDATE" } },
      ...Array.from({ length: 1000 }, (_, i) => ({
        kind: "member",
        record: { id: `d${i}`, pool_id: "pool-1", provisioning_status: "PENDING_DELETE" },
      })),
    ]);
    const set = changeSetOf(writes, tree, false);
    expect(set.groups.map((g) => [g.kind, g.pool_id, g.done.provisioning_status, g.ids.length])).toEqual([
      ["member", "pool-1", "ACTIVE", 1000],
      ["member", "pool-1", "DELETED", 1000],
      ["pool", undefined, "ACTIVE", 1],
    ]);
    expect(JSON.stringify(set).length).toBeLessThan(30_000);
    const refs = changeRefs(set);
    expect(refs).toHaveLength(2001);
    expect(refs[0]).toEqual({ kind: "member", id: "m0000", pool_id: "pool-1", done: { provisioning_status: "ACTIVE" } });
    expect(
      changeRefs(withRefs(set, [{ kind: "member", id: "x", pool_id: "pool-2", done: { provisioning_status: "ACTIVE" } }])),
    ).toHaveLength(2002);
  });
});

// A batch member update's plan: which members are new, updated or deleted, and what an update writes.
import { describe, expect, it } from "vitest";
import { planPoolMembers, Tree, type LoadBalancer, type MemberPost } from "../src";

const lb = {
  id: "lb",
  project_id: "p",
  provisioning_status: "ACTIVE",
  vip_address: "198.51.100.1",
  additional_vips: [],
} as unknown as LoadBalancer;
const pool = { id: "pool-1", protocol: "HTTP", listener_ids: [], provisioning_status: "ACTIVE" };
const stored = (i: number, over: Record<string, unknown> = {}) => ({
  id: `m${i}`,
  pool_id: "pool-1",
  project_id: "p",
  name: `node-${i}`,
  address: `10.0.0.${i}`,
  protocol_port: 80,
  weight: 1,
  admin_state_up: true,
  backup: false,
  monitor_address: null,
  monitor_port: null,
  subnet_id: null,
  tags: ["a"],
  provisioning_status: "ACTIVE",
  ...over,
});
const body = (i: number, over: Partial<MemberPost> = {}) =>
  ({
    address: `10.0.0.${i}`,
    protocol_port: 80,
    weight: 1,
    admin_state_up: true,
    backup: false,
    name: `node-${i}`,
    tags: ["a"],
    ...over,
  }) as MemberPost;

describe("planPoolMembers", () => {
  it("writes of an updated member only what changes, and its provisioning status always", () => {
    const tree = new Tree(lb, [{ kind: "pool", record: pool }, ...[1, 2, 3].map((i) => ({ kind: "member", record: stored(i) }))]);
    const plan = planPoolMembers(
      tree,
      pool,
      [body(1), body(2, { weight: 5, tags: ["a", "b"] }), body(3, { monitor_port: 8080 })],
      false,
      {},
    );
    expect(plan.created).toEqual([]);
    expect(plan.deleted).toEqual([]);
    expect(plan.updated.map((u) => [u.record.id, u.set])).toEqual([
      ["m1", { provisioning_status: "PENDING_UPDATE" }],
      ["m2", { provisioning_status: "PENDING_UPDATE", weight: 5, tags: ["a", "b"] }],
      ["m3", { provisioning_status: "PENDING_UPDATE", monitor_port: 8080 }],
    ]);
  });
});

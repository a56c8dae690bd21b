// The batch update of a pool's members (PUT /v2/lbaas/pools/{pool_id}/members, Octavia's
// MembersController.put): the request is the pool's whole member set, matched on (address,
// protocol_port). One lock, one transaction set and ONE flow for everything it creates, updates and
// deletes; the store splits the writes into transactions of at most 100 items itself. New members
// may ask for SR-IOV ports (request_sriov, v2.30) as a single create does; resubmitted ones cannot
// change theirs.
import { randomUUID } from "node:crypto";
import { MUTABLE_STATUSES, PENDING_DELETE, PENDING_UPDATE } from "../constants";
import { requireStatus, validation } from "../faults";
import { authorize, type RequestContext } from "../policy";
import type { ChildWrite, TreeRecord } from "../ports";
import type { Tree } from "../resources/child";
import {
  checkMemberAddressFamilies,
  memberAddressNotReserved,
  memberParents,
  memberVnicType,
  newMember,
  type Member,
  type MemberPost,
} from "../resources/member";
import { flavorMetadata, lockedChange } from "./children";
import type { LockDeps } from "./lock";
import { checkMemberNetworks } from "./member-networks";

export const MEMBER_BATCH_FLOW = "member-batch-update";

/** Thrown out of `decide` when the request changes nothing: Octavia rolls back and answers 202. */
class NothingToDo extends Error {}

const keyOf = (address: string, port: number) => `${address}#${port}`;

/**
 * Answers once the change is locked in and its flow started, or when there was nothing to do. `lbId`:
 * the LB the pool hangs from, as the route read it (children.ts scopeLb).
 */
export async function batchUpdateMembers(
  deps: LockDeps,
  ctx: RequestContext,
  { lbId, poolId }: { lbId: string; poolId: string },
  members: MemberPost[],
  additiveOnly: boolean,
): Promise<void> {
  try {
    await lockedChange(deps, lbId, { pools: [poolId], poolMembers: true }, async (tree) => {
      // POST + PUT (+ DELETE) since this is all of create, update and delete.
      authorize(ctx, "os_load-balancer_api:member:post", tree.lb.project_id);
      authorize(ctx, "os_load-balancer_api:member:put", tree.lb.project_id);
      if (!additiveOnly) authorize(ctx, "os_load-balancer_api:member:delete", tree.lb.project_id);
      // Octavia takes the locks before it looks at the members: a no-op on a busy LB is still a 409.
      const pool = requireStatus(tree.require("pool", poolId, "Pool"), MUTABLE_STATUSES, "Pool", poolId);
      requireStatus(tree.lb, MUTABLE_STATUSES, "Load Balancer", lbId);

      const flavor = members.some((m) => m.request_sriov) ? await flavorMetadata(deps, tree.lb.flavor_id) : {};
      const plan = planPoolMembers(tree, pool, members, additiveOnly, flavor);
      if (plan.created.length === 0 && plan.updated.length === 0 && plan.deleted.length === 0) throw new NothingToDo();
      await checkMemberNetworks(
        deps.network,
        deps.store,
        tree.lb,
        plan.created.map((m) => m.subnet_id),
      );
      const writes: ChildWrite[] = [
        ...poolMemberWrites(plan, additiveOnly),
        ...memberParents(pool).map((p) => ({ kind: p.kind, id: p.id, set: { provisioning_status: PENDING_UPDATE } })),
      ];
      // Quota on the net increase, as Octavia checks it; the deleted members are given back when the flow ends.
      const net = plan.created.length - (additiveOnly ? 0 : plan.deleted.length);
      return { flow: MEMBER_BATCH_FLOW, subject: { kind: "pool", id: poolId }, writes, quota: { check: { member: net } } };
    });
  } catch (e) {
    if (e instanceof NothingToDo) {
      deps.log.info("member batch update is a no-op", { lbId, poolId });
      return;
    }
    throw e;
  }
}

/** What a batch request does to one pool's members (shared with the cross-pool update). */
export interface PoolMemberPlan {
  pool: TreeRecord;
  /** New members, already built (PENDING_CREATE). */
  created: Member[];
  /** Resubmitted members, as stored, and the fields the request writes to them. */
  updated: { record: Member; set: Record<string, unknown> }[];
  /** Members of the pool the request does not name (deleted unless additive only). */
  deleted: Member[];
}

/**
 * Matches a request's members against one pool's on (address, protocol_port) and validates them as
 * Octavia does: a key named twice, a reserved address, SR-IOV for new members against the LB's
 * flavor metadata (`flavor`), mixed address families (LVS pools).
 */
export function planPoolMembers(
  tree: Tree,
  pool: TreeRecord,
  members: MemberPost[],
  additiveOnly: boolean,
  flavor: Readonly<Record<string, unknown>>,
  now = new Date().toISOString(),
): PoolMemberPlan {
  const old = tree.of<Member>("member").filter((m) => m.pool_id === pool.id);
  const oldByKey = new Map(old.map((m) => [keyOf(m.address, m.protocol_port), m]));
  const wanted = new Set(members.map((m) => keyOf(m.address, m.protocol_port)));

  const createdBodies: MemberPost[] = [];
  const updated: PoolMemberPlan["updated"] = [];
  // Current upstream Octavia: any (address, protocol_port) named twice is refused, new or existing.
  const seen = new Set<string>();
  for (const m of members) {
    const key = keyOf(m.address, m.protocol_port);
    if (seen.has(key)) throw validation("Member must be updated only once in the same request.");
    seen.add(key);
    const record = oldByKey.get(key);
    if (!record) {
      memberAddressNotReserved(m.address);
      createdBodies.push(m);
    } else {
      updated.push({ record, set: changedOf(record, updateOf(m)) });
    }
  }
  const deleted = old.filter((m) => !wanted.has(keyOf(m.address, m.protocol_port)));
  // Each new member goes through MemberController._graph_create, which refuses request_sriov unless
  // the flavor allows it (controllers/member.py:503, _graph_create at 248-270).
  const vnicTypes = createdBodies.map((b) => memberVnicType(b.request_sriov, flavor));
  // The driver sees new, updated and (additive only) untouched members.
  const sent = [
    ...createdBodies.map((b) => b.address),
    ...updated.map((u) => u.record.address),
    ...(additiveOnly ? deleted.map((m) => m.address) : []),
  ];
  checkMemberAddressFamilies(tree, pool, sent);
  const created = createdBodies.map((b, i) => newMember(b, tree, pool, randomUUID(), now, vnicTypes[i]!));
  return { pool, created, updated, deleted };
}

/**
 * What of an update changes the stored member: its provisioning status always, the rest only where it
 * differs (a resubmitted member is mostly unchanged; the record after the write is the same either way).
 */
function changedOf(record: Member, set: Record<string, unknown>): Record<string, unknown> {
  const now = record as unknown as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(set).filter(([k, v]) => k === "provisioning_status" || JSON.stringify(now[k] ?? null) !== JSON.stringify(v)),
  );
}

/** The member writes of a plan: puts, updates and (unless additive only) PENDING_DELETE. */
export function poolMemberWrites(plan: PoolMemberPlan, additiveOnly: boolean): ChildWrite[] {
  return [
    ...plan.created.map((record) => ({ kind: "member", put: record })),
    ...plan.updated.map(({ record, set }) => ({ kind: "member", id: record.id, pool_id: record.pool_id, set })),
    ...(additiveOnly
      ? []
      : plan.deleted.map((m) => ({ kind: "member", id: m.id, pool_id: m.pool_id, set: { provisioning_status: PENDING_DELETE } }))),
  ];
}

/**
 * What a resubmitted member overwrites: Octavia writes the MemberPOST with its defaults rendered,
 * so an omitted weight, backup, admin state or monitor address/port goes back to its default;
 * name, subnet and tags change only when given (tags only when not null). request_sriov is dropped
 * silently: the VNIC type cannot change (controllers/member.py:514-518, `db_member_dict.pop(REQUEST_SRIOV)`).
 */
export function updateOf(b: MemberPost): Record<string, unknown> {
  const set: Record<string, unknown> = {
    provisioning_status: PENDING_UPDATE,
    admin_state_up: b.admin_state_up,
    weight: b.weight,
    backup: b.backup,
    monitor_address: b.monitor_address ?? null,
    monitor_port: b.monitor_port ?? null,
  };
  if (b.name !== undefined) set.name = b.name;
  if (b.subnet_id !== undefined) set.subnet_id = b.subnet_id;
  if (b.tags !== undefined && b.tags !== null) set.tags = [...new Set(b.tags)];
  return set;
}

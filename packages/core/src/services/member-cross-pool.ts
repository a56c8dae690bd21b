// The cross-pool member batch update (PUT /v2/lbaas/pools/members, specs/member-update-across-pools):
// the member sets of several pools of ONE load balancer in one request, each matched on (pool_id,
// address, protocol_port) as the single-pool batch update matches (address, protocol_port). One lock
// (lockedChange), one flow. The member writes and what they replace (to restore on failure) go to
// the flow as change-set chunks in the LB's partition, never in the flow's input: written under the
// lock before the flow starts (the lock's beforeStart). New members may ask
// for SR-IOV ports (request_sriov) as in the single-pool batch update, whose planPoolMembers checks them.
import * as z from "zod";
import { MUTABLE_STATUSES, PENDING_DELETE, PENDING_UPDATE } from "../constants";
import { requireStatus, validation } from "../faults";
import { authorize, type RequestContext } from "../policy";
import type { ChangeSetStore, ChildWrite } from "../ports";
import { MemberPost, memberParents, type Member } from "../resources/member";
import { uuid } from "../validation";
import { flavorMetadata, lbOf, lockedChange } from "./children";
import type { LockDeps } from "./lock";
import { checkMemberNetworks } from "./member-networks";
import { planPoolMembers } from "./member-batch";

export const MEMBER_CROSS_POOL_FLOW = "member-cross-pool-update";
export const CROSS_POOL_POLICY = "os_load-balancer_api:member:put_cross_pool";
/** Members per change-set chunk (and at most this many bytes of JSON): well under DynamoDB's 400 KB item. */
export const CHANGESET_CHUNK_MEMBERS = 200;
const CHANGESET_CHUNK_BYTES = 300_000;

/** MemberPOST plus the pool it belongs to. */
export const CrossPoolMember = MemberPost.extend({ pool_id: uuid() });
export type CrossPoolMember = z.output<typeof CrossPoolMember>;
export const CrossPoolMembersPut = z.array(CrossPoolMember, { error: "Value should be a list" });

/** One member's change, with what restores it: `before` holds the previous values of the fields `set` writes. */
export type MemberChange =
  | { op: "create"; put: Member }
  | { op: "update"; id: string; pool_id: string; set: Record<string, unknown>; before: Record<string, unknown> }
  | { op: "delete"; id: string; pool_id: string };

export interface ChangeSetChunk {
  changes: MemberChange[];
}

/** The member writes of a chunk, as the flow applies them. */
export function chunkWrites(chunk: ChangeSetChunk): ChildWrite[] {
  return chunk.changes.map((c) =>
    c.op === "create"
      ? { kind: "member", put: c.put }
      : c.op === "update"
        ? { kind: "member", id: c.id, pool_id: c.pool_id, set: c.set }
        : { kind: "member", id: c.id, pool_id: c.pool_id, set: { provisioning_status: PENDING_DELETE } },
  );
}

/** Splits changes into chunks of at most CHANGESET_CHUNK_MEMBERS members and about CHANGESET_CHUNK_BYTES. */
export function toChunks(changes: MemberChange[]): ChangeSetChunk[] {
  const out: ChangeSetChunk[] = [];
  let cur: MemberChange[] = [];
  let bytes = 0;
  for (const c of changes) {
    const size = JSON.stringify(c).length;
    if (cur.length > 0 && (cur.length >= CHANGESET_CHUNK_MEMBERS || bytes + size > CHANGESET_CHUNK_BYTES)) {
      out.push({ changes: cur });
      cur = [];
      bytes = 0;
    }
    cur.push(c);
    bytes += size;
  }
  if (cur.length > 0) out.push({ changes: cur });
  return out;
}

/**
 * Validates the request against the LB's tree, takes its lock (marking the named pools and their
 * listeners PENDING_UPDATE), stores the change set under the lock, and starts ONE flow that applies
 * it. Answers when the flow has started; nothing is written if anything is refused.
 */
export async function crossPoolUpdateMembers(
  deps: LockDeps & { changeSets: ChangeSetStore },
  ctx: RequestContext,
  members: CrossPoolMember[],
  additiveOnly: boolean,
): Promise<void> {
  if (members.length === 0) throw validation("The members list must name at least one member (with its pool_id).");
  const poolIds = [...new Set(members.map((m) => m.pool_id))];
  const lbIds = new Set<string>();
  for (const poolId of poolIds) lbIds.add(await lbOf(deps, { kind: "pool", id: poolId }));
  if (lbIds.size > 1) throw validation("All pools named in a cross-pool member update must belong to the same load balancer.");
  const lbId = [...lbIds][0]!;
  const byPool = new Map<string, CrossPoolMember[]>(poolIds.map((id) => [id, []]));
  for (const m of members) byPool.get(m.pool_id)!.push(m);

  await lockedChange({ ...deps, requestId: ctx.requestId }, lbId, { pools: poolIds, poolMembers: true }, async (tree) => {
    authorize(ctx, CROSS_POOL_POLICY, tree.lb.project_id);
    const pools = poolIds.map((id) => requireStatus(tree.require("pool", id, "Pool"), MUTABLE_STATUSES, "Pool", id));
    requireStatus(tree.lb, MUTABLE_STATUSES, "Load Balancer", lbId);
    const asked = [...byPool.values()].some((members) => members.some((m) => m.request_sriov));
    const flavor = asked ? await flavorMetadata(deps, tree.lb.flavor_id) : {};
    const changes: MemberChange[] = [];
    const parents = new Map<string, ChildWrite>();
    for (const pool of pools) {
      const plan = planPoolMembers(tree, pool, byPool.get(pool.id)!, additiveOnly, flavor);
      changes.push(
        ...plan.created.map((put): MemberChange => ({ op: "create", put })),
        ...plan.updated.map(({ record, set }): MemberChange => ({
          op: "update",
          id: record.id,
          pool_id: record.pool_id,
          set,
          before: Object.fromEntries(Object.keys(set).map((k) => [k, (record as Record<string, unknown>)[k] ?? null])),
        })),
        ...(additiveOnly ? [] : plan.deleted.map((m): MemberChange => ({ op: "delete", id: m.id, pool_id: m.pool_id }))),
      );
      for (const p of memberParents(pool))
        parents.set(`${p.kind}#${p.id}`, { kind: p.kind, id: p.id, set: { provisioning_status: PENDING_UPDATE } });
    }
    await checkMemberNetworks(
      deps.network,
      deps.store,
      tree.lb,
      changes.flatMap((c) => (c.op === "create" ? [c.put.subnet_id] : [])),
    );
    const chunks = toChunks(changes);
    // Only the pools and their listeners are written with the lock; the flow applies the member
    // changes. The new members are charged now (on the net increase, as the single-pool batch).
    const created = changes.filter((c) => c.op === "create").length;
    const quota = { delta: { member: created }, check: { member: created - changes.filter((c) => c.op === "delete").length } };
    // The change set is stored under the lock (the execution's name is the lock owner) before the
    // flow starts, which is told how many chunks it has.
    const beforeStart = async (execution: string) => {
      await deps.changeSets.putChangeSetChunks(lbId, execution, chunks);
      return { chunks: chunks.length };
    };
    return { flow: MEMBER_CROSS_POOL_FLOW, subject: { kind: "loadbalancer", id: lbId }, writes: [...parents.values()], quota, beforeStart };
  });
}

// Tasks of the cross-pool member batch update flow (flows/member-cross-pool.ts). The member changes
// are read from the change set's chunks (changeSets.getChangeSetChunk), never from the flow's input, and
// each task reads only the members a chunk names, never the tree.
import {
  ACTIVE,
  AMPHORA_ALLOCATED,
  DELETED,
  ERROR,
  chunkWrites,
  failedFlowEnd,
  recordFlowEnd,
  withRefs,
  type ChangeRef,
  type ChangeSet,
  type ChangeSetChunk,
  type ChildWrite,
  type MemberChange,
  type TreeRecord,
} from "@ottava/core";
import { failureWrites, finishChange } from "./changes";
import { ignoreLockLost, servedTree, type TaskContext, type TaskHandler } from "./context";
import { applyNetworkDeltas } from "./networks";

async function chunkOf(ctx: TaskContext, lbId: string, owner: string, n: number): Promise<ChangeSetChunk> {
  const chunk = (await ctx.changeSets.getChangeSetChunk(lbId, owner, n)) as ChangeSetChunk | undefined;
  if (!chunk) throw new Error(`change set chunk ${n} of ${owner} is missing`);
  return chunk;
}

const chunkCount = (input: Record<string, unknown>) => Number(input.chunks ?? 0);
const idOf = (c: MemberChange) => (c.op === "create" ? c.put.id : c.id);
const poolOf = (c: MemberChange) => (c.op === "create" ? c.put.pool_id : c.pool_id);

/** The members a chunk names, as stored now (absent: not created, or purged). */
async function membersOf(ctx: TaskContext, lbId: string, changes: MemberChange[]): Promise<Map<string, TreeRecord>> {
  const { items } = await ctx.store.readParts(lbId, { members: changes.map((c) => ({ pool_id: poolOf(c), id: idOf(c) })) });
  return new Map(items.filter((i) => i.kind === "member").map((i) => [i.record.id, i.record]));
}

/** Every chunk's changes (a chunk that cannot be read counts as none: the failure path must go on). */
async function allChanges(ctx: TaskContext, input: Record<string, unknown> & { lbId: string; owner: string }): Promise<MemberChange[]> {
  const out: MemberChange[] = [];
  for (let n = 0; n < chunkCount(input); n++) {
    const chunk = (await ctx.changeSets.getChangeSetChunk(input.lbId, input.owner, n).catch(() => undefined)) as ChangeSetChunk | undefined;
    out.push(...(chunk?.changes ?? []));
  }
  return out;
}

/** The chunk numbers the Map iterates: [0..n-1]. */
export const planMemberChunks: TaskHandler = async (input) => Array.from({ length: chunkCount(input) }, (_, i) => i);

/** Applies one chunk's member writes under the lock; a retried chunk skips the members it already created. */
export const applyMemberChunk: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const n = Number(input.chunk);
  const chunk = await chunkOf(ctx, lbId, owner, n);
  const existing = await membersOf(
    ctx,
    lbId,
    chunk.changes.filter((c) => c.op === "create"),
  );
  const writes = chunkWrites(chunk).filter((w) => !("put" in w) || !existing.has(w.put.id));
  await ctx.store.applyAsOwner(lbId, owner, writes);
  ctx.log.info("member chunk applied", { lbId, execution: owner, chunk: n, members: writes.length });
  return null;
};

/**
 * Success: the usual finish, with the chunks' members in the change set (PENDING_* → ACTIVE, or
 * DELETED), the pools and listeners the lock marked with them; then the change set goes. Only then:
 * a finish retried after a failure must still find the members it has to finish.
 */
export const finishCrossPoolChange: TaskHandler = async (input, ctx) => {
  const members: ChangeRef[] = (await allChanges(ctx, input)).map((c) => ({
    kind: "member",
    id: idOf(c),
    pool_id: poolOf(c),
    done: { provisioning_status: c.op === "delete" ? DELETED : ACTIVE },
  }));
  const changes = input.changes as ChangeSet;
  await finishChange({ ...input, changes: withRefs(changes, members) }, ctx);
  await ctx.changeSets.deleteChangeSet(input.lbId, input.owner);
  return null;
};

/**
 * The revert: the member set as it was before the request (created members DELETED, updated ones
 * back to their previous values, PENDING_DELETE ones ACTIVE), chunk by chunk; then the restored
 * configuration is pushed to the amphorae. Idempotent, so a retry redoes it safely.
 */
export const restoreCrossPoolMembers: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  for (let n = 0; n < chunkCount(input); n++) {
    const chunk = await chunkOf(ctx, lbId, owner, n);
    const members = await membersOf(ctx, lbId, chunk.changes);
    const writes: ChildWrite[] = [];
    for (const c of chunk.changes) {
      const id = idOf(c);
      const now = members.get(id);
      if (!now || now.provisioning_status === DELETED) continue;
      const at = { kind: "member", id, pool_id: poolOf(c) };
      if (c.op === "create") writes.push({ ...at, set: { provisioning_status: DELETED, deleted_by: owner } });
      else if (c.op === "update") writes.push({ ...at, set: { ...c.before, provisioning_status: ACTIVE } });
      else writes.push({ ...at, set: { provisioning_status: ACTIVE } });
    }
    await ctx.store.applyAsOwner(lbId, owner, writes);
  }
  const tree = await servedTree(ctx, lbId);
  const amphorae = await ctx.store.amphoraeOf(lbId);
  // The networks of the members as they were (revertNetworkDeltas unplugged what the update plugged; what it unplugged comes back).
  await applyNetworkDeltas(ctx, tree, amphorae, owner);
  await ctx.drivers.amphora.update(
    tree,
    amphorae.filter((a) => a.status === AMPHORA_ALLOCATED),
  );
  ctx.log.warn("cross-pool member update reverted", { lbId, execution: owner, error: input.error });
  return null;
};

/**
 * The failure handler: the pools and listeners the lock marked go back to ACTIVE and the LB is
 * released ACTIVE; only if the restore failed ($.revertError) do the members the request touched go
 * to ERROR (those that exist).
 */
export const failCrossPoolChange: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const restoreFailed = input.revertError !== undefined;
  const changes = await allChanges(ctx, input);
  const members = await membersOf(ctx, lbId, changes);
  const writes = await failureWrites(ctx, lbId, input.changes as ChangeSet, []);
  if (restoreFailed) {
    for (const c of changes) {
      const now = members.get(idOf(c));
      if (now && now.provisioning_status !== DELETED)
        writes.push({ kind: "member", id: idOf(c), pool_id: poolOf(c), set: { provisioning_status: ERROR } });
    }
  }
  // The request charged its new members; those it never created, or the restore removed, go back.
  let unused = 0;
  for (const c of changes) {
    const now = c.op === "create" ? members.get(c.put.id) : undefined;
    if (c.op === "create" && (!now || (now.provisioning_status === DELETED && now.deleted_by === owner))) unused++;
  }
  const lb = await ctx.store.getLoadBalancer(lbId);
  const project = String(lb?.record.project_id);
  const end = failedFlowEnd(input);
  if (restoreFailed) end.reason = "the restore of the members failed too";
  await recordFlowEnd(ctx, lbId, owner, end);
  await ignoreLockLost(ctx, `load balancer ${lbId}`, async () => {
    await ctx.store.applyAsOwner(lbId, owner, writes);
    await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: ACTIVE }, true, { project, delta: { member: -unused } });
  });
  // Last: a retry of this handler before the release must still count the members from the chunks.
  await ctx.changeSets.deleteChangeSet(lbId, owner);
  const error = (input.revertError ?? input.error) as { Error?: string; Cause?: string } | undefined;
  ctx.log.error("cross-pool member update failed", { lbId, execution: owner, restoreFailed, error: error?.Error, cause: error?.Cause });
  return null;
};

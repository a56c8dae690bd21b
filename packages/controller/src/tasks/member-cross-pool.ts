// Tasks of the cross-pool member batch update flow (flows/member-cross-pool.ts). The change set is
// read from its chunks (changeSets.getChangeSetChunk), never from the flow's input.
import { ACTIVE, AMPHORA_ALLOCATED, DELETED, ERROR, chunkWrites, failedFlowEnd, recordFlowEnd, type ChangeSetChunk, type ChildWrite, type TreeRecord } from "@ottava/core";
import { finishChange } from "./changes";
import { ignoreLockLost, servedTree, type TaskContext, type TaskHandler } from "./context";

async function chunkOf(ctx: TaskContext, lbId: string, owner: string, n: number): Promise<ChangeSetChunk> {
  const chunk = (await ctx.changeSets.getChangeSetChunk(lbId, owner, n)) as ChangeSetChunk | undefined;
  if (!chunk) throw new Error(`change set chunk ${n} of ${owner} is missing`);
  return chunk;
}

const chunkCount = (input: Record<string, unknown>) => Number(input.chunks ?? 0);

async function membersById(ctx: TaskContext, lbId: string): Promise<Map<string, TreeRecord>> {
  const { items } = await ctx.store.tree(lbId);
  return new Map(items.filter((i) => i.kind === "member").map((i) => [i.record.id, i.record]));
}

/** The chunk numbers the Map iterates: [0..n-1]. */
export const planMemberChunks: TaskHandler = async (input) => Array.from({ length: chunkCount(input) }, (_, i) => i);

/** Applies one chunk's member writes under the lock; a retried chunk skips the members it already created. */
export const applyMemberChunk: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const n = Number(input.chunk);
  const chunk = await chunkOf(ctx, lbId, owner, n);
  const existing = await membersById(ctx, lbId);
  const writes = chunkWrites(chunk).filter((w) => !("put" in w) || !existing.has(w.put.id));
  await ctx.store.applyAsOwner(lbId, owner, writes);
  ctx.log.info("member chunk applied", { lbId, execution: owner, chunk: n, members: writes.length });
  return null;
};

/** Success: the change set goes, then the usual finish (PENDING_* → ACTIVE/DELETED, LB ACTIVE, lock released). */
export const finishCrossPoolChange: TaskHandler = async (input, ctx) => {
  await ctx.changeSets.deleteChangeSet(input.lbId, input.owner);
  return finishChange(input, ctx);
};

/**
 * The revert: the member set as it was before the request (created members DELETED, updated ones
 * back to their previous values, PENDING_DELETE ones ACTIVE), chunk by chunk; then the restored
 * configuration is pushed to the amphorae. Idempotent, so a retry redoes it safely.
 */
export const restoreCrossPoolMembers: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const members = await membersById(ctx, lbId);
  for (let n = 0; n < chunkCount(input); n++) {
    const chunk = await chunkOf(ctx, lbId, owner, n);
    const writes: ChildWrite[] = [];
    for (const c of chunk.changes) {
      const id = c.op === "create" ? c.put.id : c.id;
      const now = members.get(id);
      if (!now || now.provisioning_status === DELETED) continue;
      if (c.op === "create") writes.push({ kind: "member", id, set: { provisioning_status: DELETED, deleted_by: owner } });
      else if (c.op === "update") writes.push({ kind: "member", id, set: { ...c.before, provisioning_status: ACTIVE } });
      else writes.push({ kind: "member", id, set: { provisioning_status: ACTIVE } });
    }
    await ctx.store.applyAsOwner(lbId, owner, writes);
  }
  const tree = await servedTree(ctx, lbId);
  const live = (await ctx.store.amphoraeOf(lbId)).filter((a) => a.status === AMPHORA_ALLOCATED);
  await ctx.drivers.amphora.update(tree, live);
  ctx.log.warn("cross-pool member update reverted", { lbId, execution: owner, error: input.error });
  return null;
};

/**
 * The failure handler: everything left in PENDING_* goes back to ACTIVE and the LB is released
 * ACTIVE; only if the restore failed ($.revertError) do the members the request touched go to ERROR.
 */
export const failCrossPoolChange: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const restoreFailed = input.revertError !== undefined;
  const touched = new Set<string>();
  if (restoreFailed) {
    for (let n = 0; n < chunkCount(input); n++) {
      const chunk = (await ctx.changeSets.getChangeSetChunk(lbId, owner, n).catch(() => undefined)) as ChangeSetChunk | undefined;
      for (const c of chunk?.changes ?? []) touched.add(c.op === "create" ? c.put.id : c.id);
    }
  }
  const { lb, items } = await ctx.store.tree(lbId);
  const writes: ChildWrite[] = [];
  for (const { kind, record } of items) {
    if (kind === "amphora") continue;
    const s = String(record.provisioning_status);
    if (s === DELETED) continue;
    if (kind === "member" && touched.has(record.id)) writes.push({ kind, id: record.id, set: { provisioning_status: ERROR } });
    else if (s.startsWith("PENDING_")) writes.push({ kind, id: record.id, set: { provisioning_status: ACTIVE } });
  }
  // The request charged its new members; those it never created, or the restore removed, go back.
  const members = new Map(items.filter((i) => i.kind === "member").map((i) => [i.record.id, i.record]));
  let unused = 0;
  for (let n = 0; n < chunkCount(input); n++) {
    const chunk = (await ctx.changeSets.getChangeSetChunk(lbId, owner, n).catch(() => undefined)) as ChangeSetChunk | undefined;
    for (const c of chunk?.changes ?? []) {
      const now = c.op === "create" ? members.get(c.put.id) : undefined;
      if (c.op === "create" && (!now || (now.provisioning_status === DELETED && now.deleted_by === owner))) unused++;
    }
  }
  const project = String(lb?.record.project_id);
  const end = failedFlowEnd(input);
  if (restoreFailed) end.reason = "the restore of the members failed too";
  await recordFlowEnd(ctx, lbId, owner, end);
  await ignoreLockLost(ctx, `load balancer ${lbId}`, async () => {
    await ctx.store.applyAsOwner(lbId, owner, writes);
    await ctx.changeSets.deleteChangeSet(lbId, owner);
    await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: ACTIVE }, true, { project, delta: { member: -unused } });
  });
  const error = (input.revertError ?? input.error) as { Error?: string; Cause?: string } | undefined;
  ctx.log.error("cross-pool member update failed", { lbId, execution: owner, restoreFailed, error: error?.Error, cause: error?.Cause });
  return null;
};

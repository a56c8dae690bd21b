// What a locked change hands its flow: the objects it moved to PENDING_*, each with what it becomes
// when the flow succeeds, and the carried fields (relations.ts) that change once its DELETED objects
// are gone. Known when the lock is taken, so a flow finishes and fails by it without reading the tree.
import { ACTIVE, DELETED, OFFLINE, ONLINE, PENDING_DELETE, PENDING_STATUSES } from "../constants";
import type { ChildWrite, TreeRecord } from "../ports";
import type { Tree } from "../resources/child";
import { applied, relationWrites } from "../resources/relations";

/** An object the change moved to PENDING_*: `done` is what the flow writes to it when it succeeds. */
export interface ChangeRef {
  kind: string;
  id: string;
  /** A member's pool (members are stored under it). */
  pool_id?: string;
  done: Record<string, unknown>;
}

/**
 * The objects of one kind (one pool's members) that end alike, by id: a flow's input stays small
 * (about 40 bytes an object) however many members a batch names, well within Step Functions' 256 KB.
 */
export interface ChangeGroup {
  kind: string;
  pool_id?: string;
  done: Record<string, unknown>;
  ids: string[];
}

export interface ChangeSet {
  groups: ChangeGroup[];
  /** Pools deleted with every member they have: the flow deletes the members, read by their key range. */
  emptied: string[];
  /** Carried fields that change when the DELETED objects go: on their objects, and on the LB. */
  relations: ChildWrite[];
  lb: Record<string, unknown>;
}

/** Kinds whose operating status the controller sets itself (the others wait for health data). */
const SELF_REPORTING = new Set(["healthmonitor", "l7policy", "l7rule"]);

/**
 * As Octavia's Mark{HealthMonitor,L7Policy,L7Rule}ActiveInDB: once configured, the kinds that report
 * themselves are ONLINE, or OFFLINE when admin-down.
 */
export const selfReported = (kind: string, record: Record<string, unknown> | undefined): Record<string, unknown> =>
  SELF_REPORTING.has(kind) ? { operating_status: record?.admin_state_up === false ? OFFLINE : ONLINE } : {};

/**
 * The change set of `writes` (merged: one per object), applied to `after` (the tree as the lock
 * leaves it). `structure` says whether `after` holds the whole structure, so that the carried fields
 * can be derived; a change of members alone never moves them.
 */
export function changeSetOf(writes: readonly ChildWrite[], after: Tree, structure: boolean, emptied: string[] = []): ChangeSet {
  const refs: ChangeRef[] = [];
  for (const w of writes) {
    const id = "put" in w ? w.put.id : w.id;
    const record = after.get<TreeRecord>(w.kind, id) ?? ("put" in w ? w.put : undefined);
    const status = String(record?.provisioning_status ?? ("set" in w ? w.set.provisioning_status : ""));
    if (!PENDING_STATUSES.includes(status)) continue;
    const deleted = status === PENDING_DELETE;
    const online = deleted ? {} : selfReported(w.kind, record);
    const pool = w.kind === "member" ? { pool_id: String(record?.pool_id) } : {};
    refs.push({ kind: w.kind, id, ...pool, done: { provisioning_status: deleted ? DELETED : ACTIVE, ...online } });
  }
  if (!structure) return { groups: grouped(refs), emptied, relations: [], lb: {} };
  const gone = refs
    .filter((r) => r.done.provisioning_status === DELETED)
    .map((r) => ({ kind: r.kind, id: r.id, set: { provisioning_status: DELETED } }));
  const rel = relationWrites(applied(after, gone));
  return { groups: grouped(refs), emptied, relations: rel.writes, lb: rel.lb };
}

/** The objects of a change set, one by one. */
export const changeRefs = (set: ChangeSet): ChangeRef[] =>
  set.groups.flatMap((g) => g.ids.map((id) => ({ kind: g.kind, id, ...(g.pool_id ? { pool_id: g.pool_id } : {}), done: g.done })));

/** A change set with more objects (a cross-pool update's members, known to its flow). */
export const withRefs = (set: ChangeSet, refs: ChangeRef[]): ChangeSet => ({ ...set, groups: grouped([...changeRefs(set), ...refs]) });

function grouped(refs: ChangeRef[]): ChangeGroup[] {
  const groups = new Map<string, ChangeGroup>();
  for (const r of refs) {
    const key = JSON.stringify([r.kind, r.pool_id ?? null, r.done]);
    const g = groups.get(key) ?? { kind: r.kind, ...(r.pool_id ? { pool_id: r.pool_id } : {}), done: r.done, ids: [] };
    g.ids.push(r.id);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** The change set of the LB flows that finish its whole tree (create and delete): the flow reads the tree. */
export const WHOLE_TREE = "tree" as const;
export type FlowChanges = ChangeSet | typeof WHOLE_TREE;
/** An LB flow that changes the LB alone (update, failover, resize). */
export const LB_ONLY: ChangeSet = { groups: [], emptied: [], relations: [], lb: {} };

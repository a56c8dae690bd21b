// One mechanism for every object of a load balancer's tree: create, update and delete take the LB's
// lock in the same transaction that writes the object (and marks its parents PENDING_UPDATE), then
// start the object's flow; show and list read the object alone (what it shows of its children is
// carried on it, resources/relations.ts). Per-resource rules come from the ChildResource descriptors
// in ../resources.
import { randomUUID } from "node:crypto";
import { DELETED, MUTABLE_STATUSES, OFFLINE, PENDING_CREATE, PENDING_DELETE, PENDING_UPDATE } from "../constants";
import { Fault, notFound, requireFound, requireStatus } from "../faults";
import { authorize, listScope, type RequestContext } from "../policy";
import { type ChildWrite, type QuotaDelta, type TreeItem, type TreeParts, type TreeRecord } from "../ports";
import type { ItemSource } from "../query";
import { Tree, type ChildRef, type ChildResource, type ChildScope } from "../resources/child";
import { applied, relationWrites } from "../resources/relations";
import { changeSetOf } from "./change-set";
import { listItem } from "../resources/descriptor";
import { displayName } from "../resources/kinds";
import { resolveTlsRefs } from "../resources/tls-refs";
import { lockedStart, type LockDeps } from "./lock";
import { charge, createdBy } from "./quota";
import { checkRuleQuota } from "./security-group-rules";
import { checkMemberNetworks } from "./member-networks";
import type { Listener } from "../resources/listener";

/** The LB id an object hangs from (404 if the object is unknown or DELETED). */
export async function lbOf(deps: LockDeps, ref: ChildRef): Promise<string> {
  if (ref.kind === "loadbalancer") return ref.id;
  return requireFound(await deps.store.getChild(ref.kind, ref.id), displayName(ref.kind), ref.id).lbId;
}

/**
 * The LB a nested collection's parent hangs from (a pool's members, a policy's rules), 404 "<Parent>
 * <id> not found." if the parent is unknown or DELETED, as Octavia's parent controller (its _lookup)
 * answers before any route of the collection runs. Read once per request: the route hands it to
 * createChild, childSource and the batch member update.
 */
export async function scopeLb(deps: LockDeps, scope: ChildScope, params: Record<string, string>): Promise<string> {
  const id = params[scope.param] ?? "";
  return requireFound(await deps.store.getChild(scope.parentKind, id), scope.parentName, id).lbId;
}

/**
 * A flavor's metadata, as Octavia's FlavorRepository.get_flavor_metadata_dict: its profile's
 * flavor_data as an object; {} without a flavor, or when the flavor is not found ("Assuming no flavor").
 */
export async function flavorMetadata(deps: LockDeps, flavorId: string | null | undefined): Promise<Record<string, unknown>> {
  if (!flavorId) return {};
  const found = await deps.catalog.getFlavor(flavorId);
  if (!found) return {};
  try {
    const data: unknown = JSON.parse(found.profile.flavor_data ?? "null");
    return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The LB's whole tree (the LB first), 404 if the LB is unknown or DELETED: what the status tree shows. */
export async function readTree(deps: LockDeps, lbId: string) {
  const { lb, items } = await deps.store.tree(lbId);
  const versioned = requireFound(lb, "Load Balancer", lbId);
  return { versioned, tree: new Tree(versioned.record, items) };
}

/** The LB and the parts of its tree a change reads (404 if the LB is unknown or DELETED). */
async function readParts(deps: LockDeps, lbId: string, parts: TreeParts) {
  const { lb, items } = await deps.store.readParts(lbId, parts);
  const versioned = requireFound(lb, "Load Balancer", lbId);
  return { versioned, tree: new Tree(versioned.record, items) };
}

/** What most rules read: the structure (every object but members and amphorae). */
const STRUCTURE: TreeParts = { structure: true };

export interface Change {
  flow: string;
  subject: ChildRef;
  writes: ChildWrite[];
  /** The quota it charges, when not just its puts (`delta`), and the net increase checked against the limits (`check`). */
  quota?: { delta?: QuotaDelta; check?: QuotaDelta };
  /** Pools deleted with all their members (which the flow deletes when it ends). */
  emptied?: string[];
  /** Work under the lock before the flow starts (lock.ts LockPlan.beforeStart): the cross-pool change set. */
  beforeStart?: (execution: string) => Promise<Record<string, unknown>>;
}

/**
 * Reads what the rules need (`parts`), lets `decide` validate against it and name the writes, takes
 * the LB's lock with them in one transaction and starts the flow (lock.ts lockedStart: if the LB
 * changed between read and write, decides again). When the structure was read, the carried fields
 * (relations.ts) its writes change go in the same transaction, and the flow learns which objects it
 * finishes (change-set.ts). `decide` may read what the tree does not hold (the LB's flavor metadata):
 * the lock's version check still covers the tree it decided on.
 */
export async function lockedChange(
  deps: LockDeps,
  lbId: string,
  parts: TreeParts,
  decide: (tree: Tree) => Change | Promise<Change>,
): Promise<Tree> {
  const { plan } = await lockedStart(deps, lbId, async () => {
    const { versioned, tree } = await readParts(deps, lbId, parts);
    const change = await decide(tree);
    requireStatus(versioned.record, MUTABLE_STATUSES, "Load Balancer", lbId);
    const usage = await charge(deps.quotaLimits, tree.lb.project_id, change.quota?.delta ?? createdBy(change.writes), change.quota?.check);
    const structure = parts.structure === true;
    let writes = mergeWrites(change.writes);
    const rel = structure ? relationWrites(applied(tree, writes)) : { writes: [], lb: {} };
    writes = withCarried(writes, rel.writes);
    const after = applied(tree, writes, rel.lb);
    return {
      read: versioned,
      flow: change.flow,
      from: MUTABLE_STATUSES,
      to: PENDING_UPDATE,
      subject: change.subject,
      set: rel.lb,
      writes,
      usage,
      restore: {
        provisioning_status: versioned.record.provisioning_status,
        ...Object.fromEntries(Object.keys(rel.lb).map((k) => [k, (tree.lb as unknown as Record<string, unknown>)[k] ?? null])),
      },
      // Undo the object writes too: a created object goes, updated ones are restored.
      undo: (items?: TreeItem[]) => undoWrites(items ? writtenOf(writes, items) : writes, tree),
      input: { changes: changeSetOf(writes, after, structure, change.emptied) },
      beforeStart: change.beforeStart,
      after,
    };
  });
  return plan.after;
}

/** Carried-field writes folded into the change's own: into a new object's put, or its one update. */
function withCarried(writes: ChildWrite[], carried: ChildWrite[]): ChildWrite[] {
  const out = writes.map((w) => ("put" in w ? { kind: w.kind, put: { ...w.put } } : w));
  const extra: ChildWrite[] = [];
  for (const c of carried) {
    if (!("set" in c)) continue;
    const put = out.find((w): w is Extract<ChildWrite, { put: unknown }> => "put" in w && w.kind === c.kind && w.put.id === c.id);
    if (put) Object.assign(put.put, c.set);
    else extra.push(c);
  }
  return mergeWrites([...out, ...extra]);
}

/** One write per object (a transaction may not touch an item twice): later fields win. */
export function mergeWrites(writes: ChildWrite[]): ChildWrite[] {
  const out: ChildWrite[] = [];
  const sets = new Map<string, Extract<ChildWrite, { set: unknown }>>();
  for (const w of writes) {
    if ("put" in w) {
      out.push(w);
      continue;
    }
    const key = `${w.kind}#${w.id}`;
    const seen = sets.get(key);
    if (seen) Object.assign(seen.set, w.set);
    else {
      const copy = { ...w, set: { ...w.set } };
      sets.set(key, copy);
      out.push(copy);
    }
  }
  return out;
}

/** The writes of a change that may have gone through, as the tree now shows: every update, and the puts of objects that exist. */
function writtenOf(writes: ChildWrite[], items: TreeItem[]): ChildWrite[] {
  const present = new Set(items.map((i) => `${i.kind}#${i.record.id}`));
  return writes.filter((w) => !("put" in w) || present.has(`${w.kind}#${w.put.id}`));
}

function undoWrites(writes: ChildWrite[], tree: Tree): ChildWrite[] {
  return writes.map((w) => {
    if ("put" in w) return { kind: w.kind, id: w.put.id, set: { provisioning_status: DELETED }, ...memberPool(w.kind, w.put) };
    const before = tree.get(w.kind, w.id) ?? {};
    return { ...w, set: Object.fromEntries(Object.keys(w.set).map((k) => [k, (before as Record<string, unknown>)[k] ?? null])) };
  });
}

/** A member's write names its pool (members are stored under it). */
export const memberPool = (kind: string, record: Record<string, unknown>) => (kind === "member" ? { pool_id: String(record.pool_id) } : {});

const pendingParents = (refs: ChildRef[]): ChildWrite[] =>
  refs.map((r) => ({ kind: r.kind, id: r.id, set: { provisioning_status: PENDING_UPDATE } }));

/** `parentLb`: the LB the new object's parent hangs from, when the route has read it already (a nested collection's, scopeLb). */
export async function createChild<T extends TreeRecord, Post>(
  deps: LockDeps,
  ctx: RequestContext,
  res: ChildResource<T, Post>,
  body: Post,
  params: Record<string, string> = {},
  parentLb?: string,
): Promise<{ record: T }> {
  const kind = res.descriptor.kind;
  const lbId = parentLb ?? (await lbOf(deps, res.parentOf(body, params)));
  const id = randomUUID();
  const parts = res.reads?.({ action: "create", body, params }) ?? STRUCTURE;
  const after = await lockedChange(deps, lbId, parts, async (tree) => {
    authorize(ctx, `os_load-balancer_api:${kind}:post`, tree.lb.project_id);
    const flavor = res.readsFlavor?.(body) ? await flavorMetadata(deps, tree.lb.flavor_id) : {};
    const certs = await resolveTlsRefs(deps.certificates, tree.lb.project_id, res.tlsRefs?.({ action: "create", body }));
    let record = res.create({ body, tree, ctx, id, now: new Date().toISOString(), params, flavor, certs });
    if (kind === "listener")
      checkRuleQuota(deps.network?.limits, tree.lb, [...tree.of<Listener>("listener"), record as unknown as Listener]);
    if (kind === "member")
      await checkMemberNetworks(deps.network, deps.store, tree.lb, [(record as { subnet_id?: string | null }).subnet_id]);
    record = {
      ...record,
      project_id: tree.lb.project_id,
      provisioning_status: PENDING_CREATE,
      operating_status: record.operating_status ?? OFFLINE,
      loadbalancer_id: lbId,
    } as T;
    return {
      flow: `${kind}-create`,
      subject: { kind, id },
      writes: [
        { kind, put: record as T & { project_id: string; created_at: string } },
        ...pendingParents(res.parents(record, tree)),
        ...(res.sideEffects?.("create", record, tree) ?? []),
      ],
    };
  });
  return { record: await withMembers(deps, kind, lbId, after.get<T>(kind, id)!) };
}

async function existing<T extends TreeRecord>(deps: LockDeps, res: ChildResource<T>, id: string, params: Record<string, string>) {
  const kind = res.descriptor.kind;
  const found = requireFound(await deps.store.getChild(kind, id), res.descriptor.displayName, id);
  if (res.scope && found.record[res.scope.field] !== params[res.scope.param]) throw notFound(res.descriptor.displayName, id);
  return found as { record: T; lbId: string };
}

export async function updateChild<T extends TreeRecord, Put>(
  deps: LockDeps,
  ctx: RequestContext,
  res: ChildResource<T, unknown, Put>,
  id: string,
  body: Put,
  params: Record<string, string> = {},
): Promise<{ record: T }> {
  const kind = res.descriptor.kind;
  const { lbId, record: found } = await existing(deps, res, id, params);
  const after = await lockedChange(deps, lbId, res.reads?.({ action: "update", record: found }) ?? STRUCTURE, async (tree) => {
    const record = tree.get<T>(kind, id);
    if (!record) throw notFound(res.descriptor.displayName, id);
    authorize(ctx, `os_load-balancer_api:${kind}:put`, tree.lb.project_id);
    const certs = await resolveTlsRefs(deps.certificates, tree.lb.project_id, res.tlsRefs?.({ action: "update", body, record }));
    const set = { ...res.update({ body, record, tree, ctx, certs }), provisioning_status: PENDING_UPDATE };
    const updated = { ...record, ...set };
    // Only a change of allowed_cidrs changes the rules: other fields change whatever the count (a quota lowered since).
    if (kind === "listener" && "allowed_cidrs" in set)
      checkRuleQuota(
        deps.network?.limits,
        tree.lb,
        tree.of<Listener>("listener").map((l) => (l.id === id ? (updated as unknown as Listener) : l)),
      );
    return {
      flow: `${kind}-update`,
      subject: { kind, id },
      writes: [
        { kind, id, set, ...memberPool(kind, record) },
        ...pendingParents(res.parents(updated, tree)),
        ...(res.sideEffects?.("update", updated, tree) ?? []),
      ],
    };
  });
  return { record: await withMembers(deps, kind, lbId, after.get<T>(kind, id)!) };
}

export async function deleteChild<T extends TreeRecord>(
  deps: LockDeps,
  ctx: RequestContext,
  res: ChildResource<T>,
  id: string,
  params: Record<string, string> = {},
): Promise<void> {
  const kind = res.descriptor.kind;
  const { lbId, record: found } = await existing(deps, res, id, params);
  await lockedChange(deps, lbId, res.reads?.({ action: "delete", record: found }) ?? STRUCTURE, (tree) => {
    const record = tree.get<T>(kind, id);
    if (!record) throw notFound(res.descriptor.displayName, id);
    authorize(ctx, `os_load-balancer_api:${kind}:delete`, tree.lb.project_id);
    res.checkDelete?.(record, tree);
    const gone = [{ kind, id }, ...(res.cascade?.(record, tree) ?? [])];
    return {
      flow: `${kind}-delete`,
      subject: { kind, id },
      writes: [
        ...gone.map((r) => ({
          kind: r.kind,
          id: r.id,
          set: { provisioning_status: PENDING_DELETE },
          ...memberPool(r.kind, tree.get(r.kind, r.id) ?? {}),
        })),
        ...pendingParents(res.parents(record, tree).filter((p) => !gone.some((g) => g.kind === p.kind && g.id === p.id))),
        ...(res.sideEffects?.("delete", record, tree) ?? []),
      ],
      emptied: res.emptiesPools?.(record) ?? [],
    };
  });
}

export async function showChild<T extends TreeRecord>(
  deps: LockDeps,
  ctx: RequestContext,
  res: ChildResource<T>,
  id: string,
  params: Record<string, string> = {},
): Promise<{ record: T }> {
  const { lbId, record } = await existing(deps, res, id, params);
  authorize(ctx, `os_load-balancer_api:${res.descriptor.kind}:get_one`, String(record.project_id));
  return { record: await withMembers(deps, res.descriptor.kind, lbId, record) };
}

/** A pool as answered: with its members' ids, read by their key range (never stored on the pool). */
async function withMembers<T extends TreeRecord>(deps: LockDeps, kind: string, lbId: string, record: T): Promise<T> {
  return kind === "pool" ? { ...record, member_ids: await deps.store.memberIds(lbId, record.id) } : record;
}

/**
 * The objects of a kind as responses, in storage order: each answered from its own item (relations
 * are carried on it), a pool with its members' key range. A nested collection (a pool's members, a
 * policy's rules) is read from its parent's part of the tree (`parentLb`: its LB, when the route has
 * read it already, scopeLb); the others from the project or admin index.
 */
export async function childSource<T extends TreeRecord>(
  deps: LockDeps,
  ctx: RequestContext,
  res: ChildResource<T>,
  projectFilter: string | undefined,
  params: Record<string, string> = {},
  parentLb?: string,
): Promise<ItemSource> {
  const kind = res.descriptor.kind;
  if (res.scope) {
    const parentId = params[res.scope.param]!;
    const lbId = parentLb ?? (await scopeLb(deps, res.scope, params));
    const parts: TreeParts = kind === "member" ? { pools: [parentId], poolMembers: true } : STRUCTURE;
    const { tree } = await readParts(deps, lbId, parts).catch((e: unknown) => {
      throw e instanceof Fault && e.status === 404 ? notFound(displayName(res.scope!.parentKind), parentId) : e;
    });
    authorize(ctx, `os_load-balancer_api:${kind}:get_all`, tree.lb.project_id);
    const items = tree
      .of<T>(kind)
      .filter((r) => r[res.scope!.field] === parentId)
      .sort((a, b) => (`${a.created_at}#${a.id}` < `${b.created_at}#${b.id}` ? -1 : 1));
    return async function* (order, after) {
      const list = order === "asc" ? items : [...items].reverse();
      let start = 0;
      if (after !== undefined) {
        start = list.findIndex((r) => r.id === after) + 1;
        if (start === 0) throw new Fault(400, `Supplied pagination marker '${after}' is not valid.`);
      }
      for (const r of list.slice(start)) yield listItem(res.descriptor, r);
    };
  }
  const source = deps.store.children(kind, listScope(ctx, kind, projectFilter));
  return async function* (order, after, query) {
    for await (const r of source(order, after, query)) {
      const rec = r as T;
      yield listItem(res.descriptor, await withMembers(deps, kind, String(rec.loadbalancer_id), rec));
    }
  };
}

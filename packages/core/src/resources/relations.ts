// What Octavia's responses show of an object's children, carried on the object's own item: an LB's
// listeners and pools, a listener's L7 policies, a policy's rules, a pool's listeners and health
// monitor. A GET or a list page then reads the object alone, never its tree. The lists are small and
// bounded (structure, not members); a pool's members are not carried, they are read by the key range
// that places them under their pool (`member_ids` is filled by that read, never stored).
//
// They are derived, in one place: from a tree as it will be once a change is written. The mechanism
// that takes the lock writes the differences in the same transaction (relationWrites), and a flow
// that ends with objects DELETED writes the differences they make (precomputed with the lock).
import { DELETED } from "../constants";
import type { ChildWrite, TreeRecord } from "../ports";
import { Tree } from "./child";

/** The carried fields of each kind, as stored on its item. */
export const RELATION_FIELDS: Readonly<Record<string, readonly string[]>> = {
  loadbalancer: ["listener_ids", "pool_ids"],
  listener: ["l7policy_ids"],
  pool: ["listener_ids", "healthmonitor_id"],
  l7policy: ["rule_ids"],
};

type Rec = TreeRecord & Record<string, unknown>;
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
export const byCreation = (a: TreeRecord, b: TreeRecord) => (`${a.created_at}#${a.id}` < `${b.created_at}#${b.id}` ? -1 : 1);

/** A listener's L7 policies in order of position (then creation, should two ever share one). */
export const policiesOf = <T extends TreeRecord = TreeRecord>(tree: Tree, listenerId: string, except?: string): T[] =>
  tree
    .of<Rec>("l7policy")
    .filter((p) => p.listener_id === listenerId && p.id !== except)
    .sort((a, b) => Number(a.position ?? 0) - Number(b.position ?? 0) || byCreation(a, b)) as unknown as T[];

/** Octavia's Pool.listeners: the listeners using the pool as default pool or through an enabled L7 policy with rules. */
export function poolListenerIds(tree: Tree, poolId: string): string[] {
  const ids = new Set(
    tree
      .of<Rec>("listener")
      .filter((l) => l.default_pool_id === poolId)
      .sort(byId)
      .map((l) => l.id),
  );
  for (const p of tree.of<Rec>("l7policy").sort(byId)) {
    if (p.redirect_pool_id !== poolId || p.admin_state_up !== true) continue;
    if (tree.of<Rec>("l7rule").some((r) => r.l7policy_id === p.id)) ids.add(String(p.listener_id));
  }
  return [...ids].filter((id) => tree.get("listener", id));
}

/** The carried fields of one object, as the tree shows them (pools also get `member_ids` when the tree holds members). */
export function relationsOf(tree: Tree, kind: string, id: string): Record<string, unknown> {
  const ids = (k: string, where: (r: Rec) => boolean, order: (a: Rec, b: Rec) => number = byId) =>
    tree
      .of<Rec>(k)
      .filter(where)
      .sort(order)
      .map((r) => r.id);
  switch (kind) {
    case "loadbalancer":
      return { listener_ids: ids("listener", () => true), pool_ids: ids("pool", () => true) };
    case "listener":
      return { l7policy_ids: policiesOf(tree, id).map((p) => p.id) };
    case "pool":
      return {
        listener_ids: poolListenerIds(tree, id),
        healthmonitor_id: tree.of<Rec>("healthmonitor").find((h) => h.pool_id === id)?.id ?? null,
        member_ids: ids("member", (m) => m.pool_id === id),
      };
    case "l7policy":
      return { rule_ids: ids("l7rule", (r) => r.l7policy_id === id, byCreation) };
    default:
      return {};
  }
}

/** Every object of a tree (the LB first) with its carried fields filled in: the records of a new LB's graph. */
export function withRelations(tree: Tree): { lb: Record<string, unknown>; items: { kind: string; record: TreeRecord }[] } {
  return {
    lb: { ...tree.lb, ...stored("loadbalancer", relationsOf(tree, "loadbalancer", tree.lb.id)) },
    items: tree.items.map(({ kind, record }) => ({ kind, record: { ...record, ...stored(kind, relationsOf(tree, kind, record.id)) } })),
  };
}

/** Only the fields that are stored (not a pool's member_ids). */
function stored(kind: string, rel: Record<string, unknown>): Record<string, unknown> {
  const fields = RELATION_FIELDS[kind] ?? [];
  return Object.fromEntries(Object.entries(rel).filter(([k]) => fields.includes(k)));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The writes that bring the carried fields of `after`'s objects up to date, against what each
 * object carries now (its record in `after`, as read plus the change's own writes). The LB's own
 * fields come back apart: they go with the write of the LB item (the lock, or the release).
 */
export function relationWrites(after: Tree): { lb: Record<string, unknown>; writes: ChildWrite[] } {
  const diff = (kind: string, record: Record<string, unknown>, id: string) =>
    Object.fromEntries(Object.entries(stored(kind, relationsOf(after, kind, id))).filter(([k, v]) => !same(record[k], v)));
  const writes: ChildWrite[] = [];
  for (const { kind, record } of after.items) {
    if (!RELATION_FIELDS[kind]) continue;
    const set = diff(kind, record, record.id);
    if (Object.keys(set).length) writes.push({ kind, id: record.id, set });
  }
  return { lb: diff("loadbalancer", after.lb as unknown as Record<string, unknown>, after.lb.id), writes };
}

/** A tree as it will be once `writes` are applied: new objects added, changed ones updated, DELETED ones gone. */
export function applied(tree: Tree, writes: readonly ChildWrite[], lbSet: Record<string, unknown> = {}): Tree {
  const items = tree.items.map((i) => ({ kind: i.kind, record: { ...i.record } as TreeRecord }));
  const at = new Map(items.map((i) => [`${i.kind}#${i.record.id}`, i]));
  for (const w of writes) {
    if ("put" in w) {
      const item = { kind: w.kind, record: { ...w.put } as TreeRecord };
      items.push(item);
      at.set(`${w.kind}#${w.put.id}`, item);
    } else {
      const item = at.get(`${w.kind}#${w.id}`);
      if (item) Object.assign(item.record, w.set);
    }
  }
  return new Tree(
    { ...tree.lb, ...lbSet },
    items.filter((i) => i.record.provisioning_status !== DELETED),
  );
}

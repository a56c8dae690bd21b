// The fully populated load-balancer create (octavia/api/v2/controllers/load_balancer.py _graph_create):
// listeners, pools, members, health monitors, L7 policies and rules nested in one POST. Each object
// is validated by its own resource's rules against the tree built so far, and everything is written
// with the load balancer before its one create flow starts (which makes them all ACTIVE together).
import { randomUUID } from "node:crypto";
import type * as z from "zod";
import { ACTIVE, OFFLINE, PENDING_CREATE } from "../constants";
import { validation } from "../faults";
import type { RequestContext } from "../policy";
import type { TreeItem, TreeRecord } from "../ports";
import { Tree, type ChildResource } from "../resources/child";
import { healthMonitorResource } from "../resources/healthmonitor";
import { l7PolicyResource } from "../resources/l7policy";
import { l7RuleResource } from "../resources/l7rule";
import { ListenerSingleCreate, listenerResource } from "../resources/listener";
import type { LoadBalancer } from "../resources/loadbalancer";
import { memberResource } from "../resources/member";
import { poolResource } from "../resources/pool";
import { parseRoot } from "../validation";
import { TlsLookup } from "../resources/tls-refs";

type Raw = Record<string, unknown>;

const asObject = (v: unknown, what: string): Raw => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw validation(`${what} must be an object.`);
  return v as Raw;
};
const asList = (v: unknown, what: string): Raw[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw validation(`${what} must be a list.`);
  return v.map((i) => asObject(i, what));
};
const without = (o: Raw, ...keys: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
/** A pool given only by name is a reference; anything more is its full definition. */
const isReference = (p: Raw) => Object.keys(p).every((k) => k === "name");

/**
 * Builds the records of a graph for a new LB (PENDING_CREATE, OFFLINE), refusing it as Octavia does.
 * Answers them in creation order: pools (with members and monitors) before listeners (with policies and rules).
 * `flavor` is the LB's flavor metadata ({} without a flavor), which each object's create sees as in
 * a later create (members' request_sriov against allow_member_sriov).
 */
export function buildGraph(
  lb: LoadBalancer,
  ctx: RequestContext,
  listenersIn: unknown[],
  poolsIn: unknown[],
  flavor: Readonly<Record<string, unknown>>,
  /** The certificate manager's answers for the graph's TLS references (graphTlsRefs). */
  certs: TlsLookup = TlsLookup.unchecked,
): TreeItem[] {
  const listeners = asList(listenersIn, "listeners");
  const pools = asList(poolsIn, "pools");
  const required = new Set<string>();
  const named = (p: Raw) => {
    if (typeof p.name !== "string" || p.name === "") throw validation("Pools must be named when creating a fully populated loadbalancer.");
    return p.name;
  };
  // Pools defined inline under listeners and policies move to the top level; name-only ones are references.
  for (const li of listeners) {
    if (li.default_pool != null) {
      const p = asObject(li.default_pool, "default_pool");
      const name = named(p);
      if (isReference(p)) required.add(name);
      else pools.push(p);
    }
    for (const policy of asList(li.l7policies, "l7policies")) {
      if (policy.redirect_pool == null) continue;
      const p = asObject(policy.redirect_pool, "redirect_pool");
      const name = named(p);
      if (isReference(p)) required.add(name);
      else pools.push(p);
    }
  }
  const names = pools.map((p) => p.name);
  if (new Set(names).size !== names.length) throw validation("Pool names must be unique when creating a fully populated loadbalancer.");
  for (const ref of required) {
    if (!names.includes(ref)) throw validation(`Pool '${ref}' was referenced but no full definition was found.`);
  }

  const items: TreeItem[] = [];
  const now = new Date().toISOString();
  // Objects are staged ACTIVE so each resource's own checks (e.g. "the pool must be ACTIVE") see them as settled.
  const settledLb = { ...lb, provisioning_status: ACTIVE };
  const tree = () => new Tree(settledLb, items);
  const add = <T extends TreeRecord>(res: ChildResource<T, any>, body: unknown, params: Record<string, string> = {}): T => {
    const id = randomUUID();
    const record = { ...res.create({ body, tree: tree(), ctx, id, now, params, flavor, certs }) } as T;
    const staged = {
      ...record,
      project_id: lb.project_id,
      loadbalancer_id: lb.id,
      provisioning_status: ACTIVE,
      operating_status: record.operating_status ?? OFFLINE,
    };
    items.push({ kind: res.descriptor.kind, record: staged });
    return staged as T;
  };
  // Each object is read with its own create type; `schema` where Octavia's inline type differs from it.
  const parse = <T>(res: ChildResource<TreeRecord, T>, raw: Raw, schema: z.ZodType<T> = res.post): T =>
    parseRoot(res.argument, res.descriptor.root, schema, { [res.descriptor.root]: raw });

  const poolIds = new Map<string, string>();
  for (const p of pools) {
    for (const attr of ["protocol", "lb_algorithm"]) {
      if (!(attr in p)) throw validation(`Pool definition for '${String(p.name)}' missing required attribute: ${attr}`);
    }
    const pool = add(poolResource, parse(poolResource, { ...without(p, "members", "healthmonitor"), loadbalancer_id: lb.id }));
    if (typeof p.name === "string") poolIds.set(p.name, pool.id);
    for (const m of asList(p.members, "members")) add(memberResource, parse(memberResource, m), { pool_id: pool.id });
    if (p.healthmonitor != null) {
      add(healthMonitorResource, parse(healthMonitorResource, { ...asObject(p.healthmonitor, "healthmonitor"), pool_id: pool.id }));
    }
  }
  const poolOf = (ref: unknown) => (ref == null ? undefined : poolIds.get(String((ref as Raw).name)));

  for (const li of listeners) {
    const listener = add(
      listenerResource,
      parse(
        listenerResource,
        {
          ...without(li, "default_pool", "l7policies"),
          loadbalancer_id: lb.id,
          default_pool_id: poolOf(li.default_pool) ?? li.default_pool_id ?? null,
        },
        ListenerSingleCreate,
      ),
    );
    for (const policy of asList(li.l7policies, "l7policies")) {
      const created = add(
        l7PolicyResource,
        parse(l7PolicyResource, {
          ...without(policy, "redirect_pool", "rules"),
          listener_id: listener.id,
          ...(policy.redirect_pool != null ? { redirect_pool_id: poolOf(policy.redirect_pool) } : {}),
        }),
      );
      for (const rule of asList(policy.rules, "rules")) add(l7RuleResource, parse(l7RuleResource, rule), { l7policy_id: created.id });
    }
  }
  return items.map((i) => ({ kind: i.kind, record: { ...i.record, provisioning_status: PENDING_CREATE } }));
}

/** The full response of a graph create: listeners and pools as whole objects with their children, as Octavia's POST answers. */
export function fullGraphResponse(lb: LoadBalancer, items: TreeItem[]) {
  const tree = new Tree(lb, items);
  const of = (kind: string) => tree.of(kind);
  const rules = (policyId: string) =>
    of("l7rule")
      .filter((r) => r.l7policy_id === policyId)
      .map((r) => l7RuleResource.descriptor.toResponse(r as never));
  const policies = (listenerId: string) =>
    of("l7policy")
      .filter((p) => p.listener_id === listenerId)
      .map((p) => ({ ...l7PolicyResource.descriptor.toResponse(p as never), rules: rules(p.id) }));
  const members = (poolId: string) =>
    of("member")
      .filter((m) => m.pool_id === poolId)
      .map((m) => memberResource.descriptor.toResponse(m as never));
  const monitor = (poolId: string) => {
    const hm = of("healthmonitor").find((h) => h.pool_id === poolId);
    return hm ? healthMonitorResource.descriptor.toResponse(hm as never) : null;
  };
  return {
    listeners: of("listener").map((l) => {
      const { loadbalancers: _omit, ...full } = listenerResource.descriptor.toResponse(l as never);
      return { ...full, l7policies: policies(l.id) };
    }),
    pools: of("pool").map((p) => ({
      ...poolResource.descriptor.toResponse(p as never),
      members: members(p.id),
      healthmonitor: monitor(p.id),
    })),
  };
}

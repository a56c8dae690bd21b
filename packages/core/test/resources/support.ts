// What the resource tests share: bodies read as the API reads them, a small tree, and the Fault a rule throws.
import { noauthContext, parseRoot, Tree, type ChildResource, type LoadBalancer, type TreeItem, type TreeRecord } from "@ottava/core";
import { PROJECT } from "../support";

export { faultOf } from "../support";

export const LB_ID = "0f4d4e39-6a4c-4d9b-8d5e-3f0a6b2c1d01";
/** A UUID of the tree's objects, told apart by `n`. */
export const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`;
export const NOW = "2026-01-02T03:04:05.678Z";

/** A request body under `{<root>: ...}`, read through the resource's POST (or PUT) schema as its route does. */
export function parseBody<Post, Put>(res: ChildResource<any, Post, Put>, body: unknown, action: "post"): Post;
export function parseBody<Post, Put>(res: ChildResource<any, Post, Put>, body: unknown, action: "put"): Put;
export function parseBody(res: ChildResource<any, unknown, unknown>, body: unknown, action: "post" | "put") {
  return parseRoot(res.argument, res.descriptor.root, res[action], { [res.descriptor.root]: body });
}

/** wsme's refusal of an attribute's value. */
export const bad = (field: string, value: string, why: string) => `Invalid input for field/attribute ${field}. Value: '${value}'. ${why}`;

/** An ACTIVE object of the tree. */
export const item = (kind: string, record: { id: string } & Record<string, unknown>): TreeItem => ({
  kind,
  record: {
    project_id: PROJECT,
    loadbalancer_id: LB_ID,
    provisioning_status: "ACTIVE",
    operating_status: "ONLINE",
    ...record,
  } as TreeRecord,
});

/** An ACTIVE IPv4 load balancer (VIP 198.51.100.1) holding `items`. */
export const tree = (items: TreeItem[] = [], lb: Partial<LoadBalancer> = {}) =>
  new Tree(
    {
      id: LB_ID,
      project_id: PROJECT,
      provisioning_status: "ACTIVE",
      operating_status: "ONLINE",
      vip_address: "198.51.100.1",
      additional_vips: [],
      ...lb,
    } as LoadBalancer,
    items,
  );

/** A create as the generic mechanism runs it: the body read, then the resource's rules against `tree`. */
export function create<T extends TreeRecord, Post>(
  res: ChildResource<T, Post, any>,
  body: unknown,
  on: Tree,
  params: Record<string, string> = {},
  flavor: Record<string, unknown> = {},
): T {
  return res.create({
    body: parseBody(res, body, "post"),
    tree: on,
    ctx: noauthContext("req-test", PROJECT),
    id: "9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e",
    now: NOW,
    params,
    flavor,
  });
}

/** An update of `record` as the generic mechanism runs it. */
export function update<T extends TreeRecord, Put>(res: ChildResource<T, any, Put>, body: unknown, record: T, on: Tree): Partial<T> {
  return res.update({ body: parseBody(res, body, "put"), record, tree: on, ctx: noauthContext("req-test", PROJECT) });
}

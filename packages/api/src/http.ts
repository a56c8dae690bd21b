// Small helpers shared by the route modules: bodies, queries, list pages.
import type { Context } from "hono";
import { listPage, notJson, parseListQuery, selectFields, type ItemSource, type ResourceDescriptor, type Tree } from "@ottava/core";
import type { Env } from "./middleware/context";

export async function jsonBody(c: Context<Env>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw notJson();
  }
}

/** The query as ordered key/value pairs (repeated keys kept, as `fields=` and tag filters need). */
export function queryPairs(c: Context): [string, string][] {
  return [...new URL(c.req.url).searchParams.entries()];
}

/** GET on a collection: generic paging, sorting, filtering, tags and fields for any resource. */
export async function listResponse<T>(
  c: Context<Env>,
  d: ResourceDescriptor<T>,
  /** The resource's objects as responses, for the project filter (if any). */
  source: (projectFilter: string | undefined) => ItemSource | Promise<ItemSource>,
  maxLimit: number,
  /** Keys the source adds for filtering only (e.g. loadbalancer_id, as Octavia filters on its model's columns); never answered. */
  hidden: readonly string[] = [],
) {
  const q = parseListQuery(queryPairs(c), [...d.attributes, ...hidden], maxLimit);
  const shaped = await source(q.filters.project_id?.[0]);
  const url = new URL(c.req.url);
  const page = await listPage(shaped, q, `${url.origin}${url.pathname}`);
  const visible = (i: Record<string, unknown>) => Object.fromEntries(Object.entries(i).filter(([k]) => !hidden.includes(k) || d.attributes.includes(k)));
  return c.json({ [d.collection]: page.items.map((i) => selectFields(visible(i), q.fields)), [`${d.collection}_links`]: page.links });
}

/** Maps a source of records to a source of responses. */
export function responses<T>(source: ItemSource, toResponse: (r: T) => Record<string, unknown>): ItemSource {
  return (order, after) => mapAsync(source(order, after), (r) => toResponse(r as T));
}

/** GET on one object, with `fields=` as Octavia's get_one. */
export function showResponse<T>(c: Context<Env>, d: ResourceDescriptor<T>, item: T, status = 200, tree?: Tree) {
  const fields = new URL(c.req.url).searchParams.getAll("fields").flatMap((f) => f.split(",")).filter(Boolean);
  return c.json({ [d.root]: selectFields(d.toResponse(item, tree), fields) }, status as 200);
}

async function* mapAsync<A, B>(it: AsyncIterable<A>, f: (a: A) => B): AsyncGenerator<B> {
  for await (const a of it) yield f(a);
}

/** Octavia's (oslo strutils) reading of a boolean query parameter. */
export const truthy = (v: string | undefined) => ["true", "1", "yes", "t", "y", "on"].includes((v ?? "").toLowerCase());

// Small helpers shared by the route modules: bodies, queries, list pages.
import type { Context } from "hono";
import {
  checkBodyDepth,
  ENUM_TRUE,
  lightItems,
  listItem,
  listPage,
  notJson,
  parseListQuery,
  selectFields,
  type CatalogDescriptor,
  type ItemSource,
  type ListQuery,
  type ResourceDescriptor,
} from "@ottava/core";
import type { Env } from "./middleware/context";

/** The request's JSON body ({} when empty); its size was bounded by the app's bodyLimit, its depth is here. */
export async function jsonBody(c: Context<Env>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  checkBodyDepth(text);
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

/**
 * GET on a collection: generic paging, sorting, filtering, tags and fields for any resource. A
 * catalog kind answers its own links key; one keyed otherwise than by `id` (zones, quotas) pages with
 * its key as `id` (see catalog.ts keyedItems), dropped here; quotas ignore `fields` as Octavia does.
 */
export async function listResponse<T>(
  c: Context<Env>,
  d: ResourceDescriptor<T> | CatalogDescriptor<T>,
  /** The resource's objects as list items (listItem), for the project filter (if any). */
  source: (projectFilter: string | undefined) => ItemSource | Promise<ItemSource>,
  maxLimit: number,
  opts: { fields?: boolean } = {},
) {
  const q = parseListQuery(queryPairs(c), d.attributes, d.filters, maxLimit);
  const shaped = await source(projectFilter(d, q));
  const url = new URL(c.req.url);
  const page = await listPage(shaped, q, `${url.origin}${url.pathname}`, lightItems(d));
  const hasId = d.attributes.includes("id");
  const items = page.items.map((item) => {
    const { id, ...rest } = item;
    const shown = hasId ? item : rest;
    return opts.fields === false ? shown : selectFields(shown, q.fields);
  });
  return c.json({ [d.collection]: items, ["links" in d ? d.links : `${d.collection}_links`]: page.links });
}

/** The project a list asks for (`?project_id=`), which the storage reads by index. */
export const projectFilter = (d: ResourceDescriptor<unknown>, q: ListQuery) => {
  const attribute = d.filters.project_id;
  return attribute === undefined ? undefined : q.filters[attribute]?.[0];
};

/** Maps a source of records to a source of list items. */
export function listItems<T>(source: ItemSource, d: ResourceDescriptor<T>): ItemSource {
  return (order, after, query) => mapAsync(source(order, after, query), (r) => listItem(d, r as T));
}

/** GET on one object, with `fields=` as Octavia's get_one. */
export function showResponse<T>(c: Context<Env>, d: ResourceDescriptor<T>, item: T, status = 200) {
  return c.json({ [d.root]: selectFields(d.toResponse(item), fieldsOf(c)) }, status as 200);
}

/** The `fields=` of a request (repeated or comma-separated). */
export const fieldsOf = (c: Context) =>
  new URL(c.req.url).searchParams
    .getAll("fields")
    .flatMap((f) => f.split(","))
    .filter(Boolean);

async function* mapAsync<A, B>(it: AsyncIterable<A>, f: (a: A) => B): AsyncGenerator<B> {
  for await (const a of it) yield f(a);
}

/** Octavia's (oslo strutils) reading of a boolean query parameter. */
export const truthy = (v: string | undefined) => ENUM_TRUE.includes((v ?? "").toLowerCase());

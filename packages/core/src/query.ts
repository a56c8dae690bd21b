// List queries, as Octavia's pagination helper reads them (octavia/api/common/pagination.py):
// limit/marker/page_reverse, sort or sort_key/sort_dir, attribute filters, tag filters, fields.
// Pure: the storage adapter supplies items; this module filters, orders, pages and shapes them.
import { Fault } from "./faults";
import { PAGINATION_MAX_LIMIT } from "./constants";
import { ENUM_TRUE } from "./compat/wsme";

export type SortDir = "asc" | "desc";
export interface SortKey {
  key: string;
  dir: SortDir;
}

export interface ListQuery {
  limit: number;
  marker: string | undefined;
  pageReverse: boolean;
  /** Always ends with created_at and id, Octavia's default keys, so the order is total. */
  sort: SortKey[];
  /** Wanted values by the data-model attribute they filter on (several values of one attribute: any of them). */
  filters: Record<string, string[]>;
  tags: { all: string[]; any: string[]; notAll: string[]; notAny: string[] };
  fields: string[] | undefined;
  /** The request's own query, kept so the page links keep its filters (Octavia's drop them). */
  params: [string, string][];
}

const AUXILIARY = new Set(["limit", "marker", "sort", "sort_key", "sort_dir", "fields", "page_reverse"]);
const TAG_PARAMS = { tags: "all", "tags-any": "any", "not-tags": "notAll", "not-tags-any": "notAny" } as const;
export const DEFAULT_SORT_KEYS = ["created_at", "id"] as const;

const invalidSortKey = (key: string) => new Fault(400, `Supplied sort key '${key}' is not valid.`);
const invalidSortDir = (dir: string) => new Fault(400, `Supplied sort direction '${dir}' is not valid.`);
export const invalidMarker = (marker: string) => new Fault(400, `Supplied pagination marker '${marker}' is not valid.`);

/**
 * Reads a list request's query string. `attributes` are the resource's public attributes, the keys
 * it may be sorted on; `filters` maps each key Octavia filters on to its data-model attribute.
 */
export function parseListQuery(
  params: [string, string][],
  attributes: readonly string[],
  filterKeys: Readonly<Record<string, string>>,
  maxLimit = PAGINATION_MAX_LIMIT,
): ListQuery {
  const first = (k: string) => params.find(([key]) => key === k)?.[1];
  const known = new Set(attributes);

  const rawLimit = first("limit");
  let limit = maxLimit;
  if (rawLimit !== undefined) {
    if (rawLimit !== "infinite") {
      if (!/^-?\d+$/.test(rawLimit.trim())) throw new Fault(400, `Supplied pagination limit '${rawLimit}' is not valid.`);
      const n = Number(rawLimit);
      limit = n < 1 ? maxLimit : Math.min(n, maxLimit);
    }
  }

  const sort: SortKey[] = [];
  const checkKey = (key: string) => {
    if (!known.has(key) || key === "tags") throw invalidSortKey(key);
    return key;
  };
  const checkDir = (dir: string): SortDir => {
    const d = dir.toLowerCase();
    if (d !== "asc" && d !== "desc") throw invalidSortDir(d);
    return d;
  };
  const sortParam = first("sort");
  const sortKeyParam = first("sort_key");
  if (sortParam) {
    for (const part of sortParam.split(",")) {
      const comps = part.split(":");
      if (comps.length > 2) throw invalidSortKey(`[${comps.map((c) => `'${c}'`).join(", ")}]`);
      sort.push({ key: checkKey(comps[0]!), dir: comps.length === 2 ? checkDir(comps[1]!) : "asc" });
    }
  } else if (sortKeyParam) {
    const dirs = (first("sort_dir") ?? "").split(",").filter((d) => d !== "");
    sortKeyParam.split(",").forEach((k, i) => sort.push({ key: checkKey(k), dir: checkDir(dirs[i] ?? "asc") }));
  }
  for (const key of DEFAULT_SORT_KEYS) if (!sort.some((s) => s.key === key)) sort.push({ key, dir: "asc" });

  const filters: Record<string, string[]> = {};
  const tags: ListQuery["tags"] = { all: [], any: [], notAll: [], notAny: [] };
  let fields: string[] | undefined;
  for (const [key, value] of params) {
    if (key === "fields") {
      fields = [...(fields ?? []), ...value.split(",").filter((f) => f !== "")];
    } else if (Object.hasOwn(TAG_PARAMS, key)) {
      tags[TAG_PARAMS[key as keyof typeof TAG_PARAMS]].push(...value.split(",").filter((t) => t !== ""));
    } else if (!AUXILIARY.has(key)) {
      const attribute = Object.hasOwn(filterKeys, key) ? filterKeys[key] : undefined;
      if (attribute === undefined) throw new Fault(400, "One or more arguments are either duplicate or invalid");
      (filters[attribute] ??= []).push(value);
    }
  }

  return {
    limit,
    marker: first("marker"),
    pageReverse: (first("page_reverse") ?? "").toLowerCase() === "true",
    sort,
    filters,
    tags,
    fields,
    params,
  };
}

/** True when the order is the storage order (created_at, id), ascending or descending as one. */
export function storageOrder(q: ListQuery): SortDir | undefined {
  const [a, b] = q.sort;
  if (q.sort.length !== 2 || a?.key !== "created_at" || b?.key !== "id" || a.dir !== b.dir) return undefined;
  return a.dir;
}

type Item = Record<string, unknown>;

/**
 * A listed item's data-model values that its response does not show under the same name (a pool's
 * `health_monitor.id`, a member's `pool_id`): filtered on, never answered (JSON leaves symbol keys out).
 */
export const MODEL_VALUES = Symbol("modelValues");

/** The value a filter on the data-model attribute `key` compares: the model's, else the response's. */
function filterValue(item: Item, key: string): unknown {
  const model = (item as { [MODEL_VALUES]?: Item })[MODEL_VALUES];
  return model && Object.hasOwn(model, key) ? model[key] : item[key];
}

/** Does an item pass the query's attribute and tag filters? */
export function matches(item: Item, q: ListQuery): boolean {
  for (const [key, wanted] of Object.entries(q.filters)) {
    const actual = filterValue(item, key);
    if (!wanted.some((w) => sameValue(actual, w))) return false;
  }
  const itemTags = new Set(Array.isArray(item.tags) ? (item.tags as string[]) : []);
  const { all, any, notAll, notAny } = q.tags;
  if (all.length && !all.every((t) => itemTags.has(t))) return false;
  if (any.length && !any.some((t) => itemTags.has(t))) return false;
  if (notAll.length && notAll.every((t) => itemTags.has(t))) return false;
  if (notAny.length && notAny.some((t) => itemTags.has(t))) return false;
  return true;
}

function sameValue(actual: unknown, wanted: string): boolean {
  if (typeof actual === "boolean") return ENUM_TRUE.includes(wanted.toLowerCase()) === actual;
  if (actual === null || actual === undefined) return wanted === "" || wanted.toLowerCase() === "none";
  if (Array.isArray(actual)) return actual.map(String).includes(wanted);
  return String(actual) === wanted;
}

/** Orders items by the query's sort keys; nulls sort as the empty string, as Octavia's do. */
export function compareBy(sort: SortKey[]): (a: Item, b: Item) => number {
  return (a, b) => {
    for (const { key, dir } of sort) {
      const c = compareValues(a[key], b[key]);
      if (c !== 0) return dir === "asc" ? c : -c;
    }
    return 0;
  };
}

function compareValues(a: unknown, b: unknown): number {
  const x = a ?? "";
  const y = b ?? "";
  if (typeof x === "number" && typeof y === "number") return x - y;
  if (typeof x === "boolean" && typeof y === "boolean") return Number(x) - Number(y);
  const s = typeof x === "string" ? x : JSON.stringify(x);
  const t = typeof y === "string" ? y : JSON.stringify(y);
  return s < t ? -1 : s > t ? 1 : 0;
}

/**
 * Where the items come from: the storage adapter yields a project's (or every project's) items in
 * storage order, (created_at, id) ascending or descending, starting after `after` (an item id) if given.
 * `query` says more of what the list asks; a source may ignore it (listPage filters what it yields
 * either way), and a source that wraps another passes it on.
 */
export type ItemSource = (order: SortDir, after: string | undefined, query?: SourceQuery) => AsyncIterable<Item>;

export interface SourceQuery {
  /**
   * The list keeps only items whose stored `name` is one of these (each a non-empty string): the source
   * may yield only those (still in storage order, after `after`).
   */
  names?: string[];
  /** A page in a non-default order, chosen from partial items: see Selection. */
  select?: Selection;
  /** The page's size: a source may read that many (and a little more) before it reads on. */
  limit?: number;
}

/**
 * How a source that can read partial items serves a non-default order: it reads every item of its
 * scope (or of `names`) with only `attributes` (and `id`, `created_at`), hands them to `page` (in any
 * order), and then yields the whole items of the ids `page` answers, in that order (leaving out any
 * that has gone meanwhile). `page` may throw (an unknown marker). A source that does not call `page`
 * yields its items as usual.
 */
export interface Selection {
  attributes: string[];
  page(items: Item[]): string[];
}

/**
 * How list items are made from stored records that carry only some attributes (for Selection): a
 * resource's (`lightItems` in resources/descriptor.ts).
 */
export interface LightItems {
  /**
   * The stored attributes a list item's key (a response field, or a filter's data-model value) is
   * made of; undefined when it takes more than the object's own record (its relations).
   */
  reads(key: string): readonly string[] | undefined;
  /** The list item of a record that carries `attributes` only: right in every key whose reads are among them. */
  item(record: Item, attributes: readonly string[]): Item;
}

export interface Page {
  items: Item[];
  links: { href: string; rel: "next" | "previous" }[];
}

/**
 * One page of a list. In storage order only `limit` matching items (plus one to spot the end) are read;
 * a `name` filter lets the source read only the items of those names. Any other order reads the whole
 * (project's) set once and sorts it in memory: with `light` (how the resource's list items are made
 * from partial records), a source that can reads only what the sort keys and filters need, and then
 * the page's whole items.
 */
export async function listPage(source: ItemSource, q: ListQuery, url: string, light?: LightItems): Promise<Page> {
  const order = storageOrder(q);
  const names = indexedNames(q);
  let items: Item[];
  if (order) {
    // Forward: after the marker in the requested order. Reverse: before it, read backwards.
    const readOrder: SortDir = q.pageReverse ? (order === "asc" ? "desc" : "asc") : order;
    items = [];
    for await (const item of source(readOrder, q.marker, { ...(names ? { names } : {}), limit: q.limit })) {
      if (!matches(item, q)) continue;
      items.push(item);
      if (items.length >= q.limit) break;
    }
    if (q.pageReverse) items.reverse();
  } else {
    const attributes = light && lightAttributes(light, q);
    let selected = false;
    const select: Selection | undefined = attributes && {
      attributes,
      page: (partial) => {
        selected = true;
        const made = partial.map((r) => ({ id: r.id, item: light!.item(r, attributes) }));
        const chosen = sortedPage(
          made.filter((m) => matches(m.item, q)),
          (m) => m.item,
          q,
        );
        return chosen.map((m) => String(m.id));
      },
    };
    const all: Item[] = [];
    for await (const item of source("asc", undefined, names || select ? { names, select } : undefined)) all.push(item);
    items = selected
      ? all
      : sortedPage(
          all.filter((i) => matches(i, q)),
          (i) => i,
          q,
        );
  }
  return { items, links: pageLinks(items, q, url) };
}

/** The page of `all` (the items that passed the filters) in the query's order: sorted, then cut at the marker and the limit. */
function sortedPage<T>(all: T[], item: (t: T) => Item, q: ListQuery): T[] {
  const compare = compareBy(q.sort);
  all.sort((a, b) => compare(item(a), item(b)));
  let start = 0;
  let end = all.length;
  if (q.marker !== undefined) {
    const at = all.findIndex((t) => item(t).id === q.marker);
    if (at < 0) throw invalidMarker(q.marker);
    if (q.pageReverse) end = at;
    else start = at + 1;
  }
  return q.pageReverse ? all.slice(Math.max(start, end - q.limit), end) : all.slice(start, start + q.limit);
}

/** The names a query keeps (`?name=`), when a name index can serve them: none empty (an empty name is no index key). */
function indexedNames(q: ListQuery): string[] | undefined {
  const wanted = q.filters.name;
  if (!wanted || wanted.length === 0 || wanted.some((n) => n === "")) return undefined;
  return [...new Set(wanted)];
}

/** The stored attributes the query's sort keys, filters and tag filters read; undefined if one takes more than the record. */
function lightAttributes(light: LightItems, q: ListQuery): string[] | undefined {
  const { all, any, notAll, notAny } = q.tags;
  const keys = [
    ...q.sort.map((s) => s.key),
    ...Object.keys(q.filters),
    ...(all.length + any.length + notAll.length + notAny.length ? ["tags"] : []),
  ];
  const out = new Set<string>();
  for (const key of keys) {
    const reads = light.reads(key);
    if (!reads) return undefined;
    for (const a of reads) out.add(a);
  }
  return [...out];
}

/** Octavia's page links: `previous` whenever a marker was given, `next` when the page is full. */
function pageLinks(items: Item[], q: ListQuery, url: string): Page["links"] {
  if (items.length === 0) return [];
  const base = q.params.filter(([k]) => k !== "limit" && k !== "marker" && k !== "page_reverse");
  const href = (extra: [string, string][]) => `${url}?${new URLSearchParams([["limit", String(q.limit)], ...base, ...extra]).toString()}`;
  const links: Page["links"] = [];
  if (q.marker !== undefined) {
    links.push({
      href: href([
        ["marker", String(items[0]!.id)],
        ["page_reverse", "True"],
      ]),
      rel: "previous",
    });
  }
  if (items.length >= q.limit) links.push({ href: href([["marker", String(items[items.length - 1]!.id)]]), rel: "next" });
  return links;
}

/** Keeps only the requested fields (repeated `fields=` or comma-separated). */
export function selectFields(item: Item, fields: string[] | undefined): Item {
  if (!fields || fields.length === 0) return item;
  return Object.fromEntries(Object.entries(item).filter(([k]) => fields.includes(k)));
}

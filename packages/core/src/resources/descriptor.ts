// What the generic API machinery (lookup, lists, faults) needs to know of a resource, and what the
// catalog's objects (flavors, zones, their profiles, quotas) add to it.
import type * as z from "zod";
import { MODEL_VALUES, type LightItems } from "../query";
import type { MetadataKind } from "./provider";
import type { QuotaField } from "./quota";

export interface ResourceDescriptor<T> {
  /** Storage kind, also the prefix of its keys. */
  kind: string;
  /** The name Octavia uses in messages: "Load Balancer 1234 not found." */
  displayName: string;
  /** The project quota its objects count against (Octavia's quota field); none for objects outside quotas. */
  quotaField?: QuotaField;
  /** The body's root key for one object: {"loadbalancer": {...}}. */
  root: string;
  /** The body's key for a list: {"loadbalancers": [...], "loadbalancers_links": [...]}. */
  collection: string;
  /** Its public attributes: what lists may sort and select on. */
  attributes: readonly string[];
  /**
   * Octavia's list filters (PaginationHelper.apply, octavia/api/common/pagination.py): each query key
   * it accepts, mapped to the data-model attribute it filters on. Any other key is the 400. Proven
   * equal to Octavia's by packages/core/test/filters.test.ts (fixtures/octavia-filters.py).
   */
  filters: Readonly<Record<string, string>>;
  /** The data-model attributes among `filters`' values that the response does not carry under that name. */
  model?(item: T, response: Record<string, unknown>): Record<string, unknown>;
  /**
   * The public representation, field for field as Octavia answers it. What it shows of an object's
   * children comes from the object's own record (relations.ts), so no tree is read to answer it.
   */
  toResponse(item: T): Record<string, unknown>;
  /**
   * For lists in a non-default order, which read only what the sort keys and filters need: the stored
   * attributes of each response field and `model` value that is not made of the attribute of the same
   * name alone; null for those made of more than the object's own record (relations), whose lists
   * read whole items. Proven against whole-item lists by packages/api/test/filters.test.ts ("in a non-default order").
   */
  listReads?: Readonly<Record<string, readonly string[] | null>>;
}

/** The catalog's kinds, by their storage names (the CatalogStore port, ../catalog.ts). */
export type CatalogKind = "flavorprofile" | "flavor" | "availabilityzoneprofile" | "availabilityzone" | "quota";

/** What a catalog object, outside any load balancer's tree, adds to the generic descriptor. */
export interface CatalogDescriptor<T> extends ResourceDescriptor<T> {
  kind: CatalogKind;
  /** The list body's links key (Octavia spells it "flavorprofile_links" for flavor profiles). */
  links: string;
  /** The attribute that identifies a record, and that a list's marker names: id, name (zones) or project_id (quotas). */
  key: keyof T & string;
}

/**
 * A catalog object that Octavia serves with five routes (list, create, show, update, delete): flavors,
 * availability zones and their profiles (services/catalog.ts, api routes/catalog.ts). Quotas, another
 * shape, have a CatalogDescriptor only.
 */
export interface CatalogObject<T, Post = unknown, Put = unknown> extends CatalogDescriptor<T> {
  /** wsme's argument name in messages ("flavor_" -> "Unknown attribute for argument flavor_.flavor: x"). */
  argument: string;
  post: z.ZodType<Post>;
  put: z.ZodType<Put>;
  /** Its policy rules: os_load-balancer_api:<policy>:<action>. */
  policy: string;
  /** The controller's name, where Octavia's messages (its NIL id, delete, in use) say it instead of the model's (displayName). */
  controllerName?: string;
  /**
   * A provider profile: its data (JSON text in `field`) must suit the provider's `metadata` schema,
   * and neither the data nor the provider can change, nor the profile go, while an object uses it.
   */
  profileData?: { field: "flavor_data" | "availability_zone_data"; metadata: MetadataKind };
  /** An object of a profile: the attribute naming it, and the profile's displayName (an unknown one is its 404). */
  profile?: { field: keyof T & string; displayName: string };
  /** The load-balancer attribute that names such an object: it cannot go while a load balancer has it (Octavia's foreign key). */
  usedBy?: "flavor_id" | "availability_zone";
}

/** Octavia answers times as naive UTC ISO 8601 to the second: "2024-05-01T12:34:56". */
export const apiTime = <T extends string | null>(t: T): T => (t === null ? t : (t.slice(0, 19) as T));

/** Octavia's filter table: attributes filtered under their own name, then API keys that Octavia translates. */
export const octaviaFilters = (same: readonly string[], translated: Record<string, string> = {}): Record<string, string> => ({
  ...Object.fromEntries(same.map((k) => [k, k])),
  ...translated,
});

/**
 * A catalog object's attributes: what its lists sort, select and filter on (each under its own name),
 * and its response, the attributes as stored, in order, but a null name or description answered ""
 * (Octavia stores None and answers "").
 */
export const catalogAttributes = (attributes: readonly string[]) => ({
  attributes,
  filters: octaviaFilters(attributes),
  toResponse: (item: object): Record<string, unknown> => {
    const r = item as Record<string, unknown>;
    return Object.fromEntries(attributes.map((a) => [a, a === "name" || a === "description" ? (r[a] ?? "") : r[a]]));
  },
});

/** A listed object: its response, carrying its data-model values for the list's filters. */
export function listItem<T>(d: ResourceDescriptor<T>, item: T): Record<string, unknown> {
  const response = d.toResponse(item);
  return Object.assign(response, { [MODEL_VALUES]: d.model?.(item, response) ?? {} });
}

/**
 * How a resource's list items are made from partial records (listPage's LightItems): `toResponse`
 * and `model` on the record, where every attribute it does not carry reads as an empty list (which
 * every response builder takes without failing), so the keys whose attributes it carries are right.
 */
export function lightItems<T>(d: ResourceDescriptor<T>): LightItems {
  return {
    reads: (key) => {
      const declared = d.listReads && Object.hasOwn(d.listReads, key) ? d.listReads[key] : [key];
      return declared ?? undefined;
    },
    item: (record, attributes) => {
      const carried = new Set(attributes);
      const padded = new Proxy(record, {
        get: (target, key, receiver) =>
          typeof key === "string" && !carried.has(key) && key !== "id" && key !== "created_at" ? [] : Reflect.get(target, key, receiver),
      });
      return listItem(d, padded as T);
    },
  };
}

// The catalog port: Octavia's global objects, outside any load balancer's tree (flavors, flavor
// profiles, availability zones and their profiles, quotas). Small admin-managed sets, each object
// read and written on its own; the DynamoDB adapter is @ottava/db's catalog.ts.
import type { ItemSource } from "./query";
import type { AvailabilityZone, AvailabilityZoneProfile } from "./resources/availability-zone";
import type { CatalogKind } from "./resources/descriptor";
import type { Flavor, FlavorProfile } from "./resources/flavor";
import type { Quota } from "./resources/quota";

/** Each kind's record, by the storage kind name. */
export interface CatalogRecords extends Record<CatalogKind, object> {
  flavorprofile: FlavorProfile;
  flavor: Flavor;
  availabilityzoneprofile: AvailabilityZoneProfile;
  availabilityzone: AvailabilityZone;
  quota: Quota;
}

/**
 * Why a catalog write was refused. Every one is decided by the write's own condition, so two
 * concurrent requests can never both pass (no check-then-write race).
 */
export type CatalogConflictReason =
  /** create: an object with that key exists. */
  | "exists"
  /** update, delete: no object with that key. */
  | "not_found"
  /** update or delete that must not happen while a child (a flavor of the profile, a zone of the zone profile) references it. */
  | "in_use"
  /** create, update: another object of the kind has that unique value (flavor names). */
  | "duplicate"
  /** create: the parent the record references (its profile) does not exist. */
  | "no_parent";

export class CatalogConflict extends Error {
  constructor(readonly reason: CatalogConflictReason) {
    super(`catalog write refused: ${reason}`);
    this.name = "CatalogConflict";
  }
}

export interface CatalogWriteOptions {
  /** Only if no child references the object (race-free: part of the write's condition). */
  unreferenced?: boolean;
}

export interface CatalogStore {
  get<K extends CatalogKind>(kind: K, key: string): Promise<CatalogRecords[K] | undefined>;
  /** Every object of a kind in key order (id, name or project id), resuming after the marker key `after`. */
  list(kind: CatalogKind): ItemSource;
  /** Does any child reference the object (flavors of a flavor profile, zones of a zone profile)? */
  referenced(kind: CatalogKind, key: string): Promise<boolean>;
  /** Creates an object; a child also counts as a reference of its parent, in the same transaction. */
  create<K extends CatalogKind>(kind: K, record: CatalogRecords[K]): Promise<void>;
  /** Writes fields of an existing object and answers it as it is now. */
  update<K extends CatalogKind>(
    kind: K,
    key: string,
    set: Partial<CatalogRecords[K]>,
    opts?: CatalogWriteOptions,
  ): Promise<CatalogRecords[K]>;
  /** Writes fields of an object, creating it when missing (quotas). */
  upsert<K extends CatalogKind>(kind: K, key: string, set: Partial<CatalogRecords[K]>): Promise<CatalogRecords[K]>;
  /** Deletes an object, and its reference from its parent, in one transaction. */
  delete(kind: CatalogKind, key: string, opts?: CatalogWriteOptions): Promise<void>;
  /** A flavor and its profile (what creates and resizes read); undefined if either is missing. */
  getFlavor(id: string): Promise<{ flavor: Flavor; profile: FlavorProfile } | undefined>;
  /** An availability zone and its profile; undefined if either is missing. */
  getAvailabilityZone(name: string): Promise<{ zone: AvailabilityZone; profile: AvailabilityZoneProfile } | undefined>;
  /** Does a load balancer that is not DELETED have `field` = `value` (a flavor id, an availability zone name)? */
  loadBalancersUsing(field: "flavor_id" | "availability_zone", value: string): Promise<boolean>;
}

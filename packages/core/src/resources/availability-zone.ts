// Availability zones and their profiles (octavia/api/v2/types/availability_zones.py,
// availability_zone_profile.py; their records, octavia/db/models.py). Zones are keyed by name.
import type * as z from "zod";
import { AVAILABILITY_ZONE_DATA, DESCRIPTION_MAX, NAME_MAX } from "../constants";
import { body, bool, str, uuid } from "../validation";
import { catalogAttributes, type CatalogObject } from "./descriptor";
import { METADATA_MAX, PROVIDER_NAME_MAX } from "./flavor";

export interface AvailabilityZoneProfile {
  id: string;
  name: string | null;
  provider_name: string;
  availability_zone_data: string;
}

export interface AvailabilityZone {
  name: string;
  description: string | null;
  enabled: boolean;
  availability_zone_profile_id: string;
}

export const AvailabilityZoneProfilePost = body({
  name: str(NAME_MAX).nullable(),
  provider_name: str(PROVIDER_NAME_MAX).nullable(),
  availability_zone_data: str(METADATA_MAX).nullable(),
});
export type AvailabilityZoneProfilePost = z.output<typeof AvailabilityZoneProfilePost>;

export const AvailabilityZoneProfilePut = body({
  name: str(NAME_MAX).nullish(),
  provider_name: str(PROVIDER_NAME_MAX).nullish(),
  availability_zone_data: str(METADATA_MAX).nullish(),
});
export type AvailabilityZoneProfilePut = z.output<typeof AvailabilityZoneProfilePut>;

/**
 * The name is the zone's key: never null, and never empty. Octavia stores an empty name, a zone no URL
 * can address (`/availabilityzones/` is the list), so none can show, change or delete it; Ottava refuses
 * it with wsme's min_length message (docs/api-compatibility.md).
 */
export const AvailabilityZonePost = body({
  name: str(NAME_MAX, 1),
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().default(true),
  availability_zone_profile_id: uuid(),
});
export type AvailabilityZonePost = z.output<typeof AvailabilityZonePost>;

/** Neither the name nor the profile can change (wsme refuses them as unknown attributes). */
export const AvailabilityZonePut = body({
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().optional(),
});
export type AvailabilityZonePut = z.output<typeof AvailabilityZonePut>;

const PROFILE_ATTRIBUTES = ["id", "name", "provider_name", "availability_zone_data"];
const ZONE_ATTRIBUTES = ["name", "description", "enabled", "availability_zone_profile_id"];

export const availabilityZoneProfileCatalog: CatalogObject<
  AvailabilityZoneProfile,
  AvailabilityZoneProfilePost,
  AvailabilityZoneProfilePut
> = {
  kind: "availabilityzoneprofile",
  displayName: "Availability Zone Profile",
  root: "availability_zone_profile",
  collection: "availability_zone_profiles",
  links: "availability_zone_profile_links",
  key: "id",
  argument: "availability_zone_profile_",
  post: AvailabilityZoneProfilePost,
  put: AvailabilityZoneProfilePut,
  policy: "availability-zone-profile",
  profileData: { field: AVAILABILITY_ZONE_DATA, metadata: "availability_zone" },
  ...catalogAttributes(PROFILE_ATTRIBUTES),
};

export const availabilityZoneCatalog: CatalogObject<AvailabilityZone, AvailabilityZonePost, AvailabilityZonePut> = {
  kind: "availabilityzone",
  displayName: "Availability Zone",
  root: "availability_zone",
  collection: "availability_zones",
  links: "availability_zones_links",
  key: "name",
  argument: "availability_zone_",
  post: AvailabilityZonePost,
  put: AvailabilityZonePut,
  policy: "availability-zone",
  profile: { field: "availability_zone_profile_id", displayName: availabilityZoneProfileCatalog.displayName },
  usedBy: "availability_zone",
  ...catalogAttributes(ZONE_ATTRIBUTES),
};

// Availability zones and their profiles (octavia/api/v2/types/availability_zones.py,
// availability_zone_profile.py). Zones are keyed by name; their records live in ./flavor.ts with
// the other catalog records the load-balancer create reads.
import { DESCRIPTION_MAX, NAME_MAX } from "../constants";
import type { CatalogDescriptor } from "../catalog";
import { body, bool, str, uuid } from "../validation";
import { octaviaFilters } from "./descriptor";
import { METADATA_MAX, PROVIDER_NAME_MAX, type AvailabilityZone, type AvailabilityZoneProfile } from "./flavor";

export const AvailabilityZoneProfilePost = body({
  name: str(NAME_MAX).nullable(),
  provider_name: str(PROVIDER_NAME_MAX).nullable(),
  availability_zone_data: str(METADATA_MAX).nullable(),
});

export const AvailabilityZoneProfilePut = body({
  name: str(NAME_MAX).nullish(),
  provider_name: str(PROVIDER_NAME_MAX).nullish(),
  availability_zone_data: str(METADATA_MAX).nullish(),
});

/** The name is the zone's key: never null. */
export const AvailabilityZonePost = body({
  name: str(NAME_MAX),
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().default(true),
  availability_zone_profile_id: uuid(),
});

/** Neither the name nor the profile can change (wsme refuses them as unknown attributes). */
export const AvailabilityZonePut = body({
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().optional(),
});

export const availabilityZoneProfileResource: CatalogDescriptor<AvailabilityZoneProfile> = {
  kind: "availabilityzoneprofile",
  displayName: "Availability Zone Profile",
  root: "availability_zone_profile",
  collection: "availability_zone_profiles",
  links: "availability_zone_profile_links",
  key: "id",
  attributes: ["id", "name", "provider_name", "availability_zone_data"],
  filters: octaviaFilters(["id", "name", "provider_name", "availability_zone_data"]),
  toResponse: (p) => ({
    id: p.id,
    name: p.name ?? "",
    provider_name: p.provider_name,
    availability_zone_data: p.availability_zone_data,
  }),
};

export const availabilityZoneResource: CatalogDescriptor<AvailabilityZone> = {
  kind: "availabilityzone",
  displayName: "Availability Zone",
  root: "availability_zone",
  collection: "availability_zones",
  links: "availability_zones_links",
  key: "name",
  attributes: ["name", "description", "enabled", "availability_zone_profile_id"],
  filters: octaviaFilters(["name", "description", "enabled", "availability_zone_profile_id"]),
  toResponse: (z) => ({
    name: z.name,
    description: z.description ?? "",
    enabled: z.enabled,
    availability_zone_profile_id: z.availability_zone_profile_id,
  }),
};

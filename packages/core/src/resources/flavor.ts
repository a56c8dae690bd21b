// Flavors and flavor profiles (octavia/api/v2/types/flavors.py, flavor_profile.py), and the catalog
// records the load-balancer create reads (octavia/db/models.py). Names and descriptions may be null
// (Octavia stores None and answers "").
import { DESCRIPTION_MAX, NAME_MAX } from "../constants";
import type { CatalogDescriptor } from "../catalog";
import { body, bool, str, uuid } from "../validation";
import { octaviaFilters } from "./descriptor";

export interface FlavorProfile {
  id: string;
  name: string | null;
  provider_name: string;
  /** JSON text, e.g. {"loadbalancer_topology": "ACTIVE_STANDBY", "compute_flavor": "..."} */
  flavor_data: string;
}

export interface Flavor {
  id: string;
  name: string | null;
  description: string | null;
  enabled: boolean;
  flavor_profile_id: string;
}

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

/** Provider names and metadata, as wsme sizes them. */
export const PROVIDER_NAME_MAX = 255;
export const METADATA_MAX = 4096;

// Mandatory attributes are nullable: wsme only refuses them when absent (Octavia then answers None as "").
export const FlavorProfilePost = body({
  name: str(NAME_MAX).nullable(),
  provider_name: str(PROVIDER_NAME_MAX).nullable(),
  flavor_data: str(METADATA_MAX).nullable(),
});

export const FlavorProfilePut = body({
  name: str(NAME_MAX).nullish(),
  provider_name: str(PROVIDER_NAME_MAX).nullish(),
  flavor_data: str(METADATA_MAX).nullish(),
});

export const FlavorPost = body({
  name: str(NAME_MAX).nullable(),
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().default(true),
  flavor_profile_id: uuid(),
});

/** flavor_profile_id is not here: it cannot change (wsme refuses it as an unknown attribute). */
export const FlavorPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().optional(),
});

export const flavorProfileResource: CatalogDescriptor<FlavorProfile> = {
  kind: "flavorprofile",
  displayName: "Flavor Profile",
  root: "flavorprofile",
  collection: "flavorprofiles",
  links: "flavorprofile_links",
  key: "id",
  attributes: ["id", "name", "provider_name", "flavor_data"],
  filters: octaviaFilters(["id", "name", "provider_name", "flavor_data"]),
  toResponse: (p) => ({ id: p.id, name: p.name ?? "", provider_name: p.provider_name, flavor_data: p.flavor_data }),
};

export const flavorResource: CatalogDescriptor<Flavor> = {
  kind: "flavor",
  displayName: "Flavor",
  root: "flavor",
  collection: "flavors",
  links: "flavors_links",
  key: "id",
  attributes: ["id", "name", "description", "enabled", "flavor_profile_id"],
  filters: octaviaFilters(["id", "name", "description", "enabled", "flavor_profile_id"]),
  toResponse: (f) => ({
    id: f.id,
    name: f.name ?? "",
    description: f.description ?? "",
    enabled: f.enabled,
    flavor_profile_id: f.flavor_profile_id,
  }),
};

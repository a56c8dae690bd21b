// Flavors and flavor profiles (octavia/api/v2/types/flavors.py, flavor_profile.py; their records,
// octavia/db/models.py). Names and descriptions may be null (Octavia stores None and answers "").
import type * as z from "zod";
import { DESCRIPTION_MAX, FLAVOR_DATA, NAME_MAX } from "../constants";
import { body, bool, str, uuid } from "../validation";
import { catalogAttributes, type CatalogObject } from "./descriptor";

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

/** Provider names and metadata, as wsme sizes them. */
export const PROVIDER_NAME_MAX = 255;
export const METADATA_MAX = 4096;

// Mandatory attributes are nullable: wsme only refuses them when absent (Octavia then answers None as "").
export const FlavorProfilePost = body({
  name: str(NAME_MAX).nullable(),
  provider_name: str(PROVIDER_NAME_MAX).nullable(),
  flavor_data: str(METADATA_MAX).nullable(),
});
export type FlavorProfilePost = z.output<typeof FlavorProfilePost>;

export const FlavorProfilePut = body({
  name: str(NAME_MAX).nullish(),
  provider_name: str(PROVIDER_NAME_MAX).nullish(),
  flavor_data: str(METADATA_MAX).nullish(),
});
export type FlavorProfilePut = z.output<typeof FlavorProfilePut>;

export const FlavorPost = body({
  name: str(NAME_MAX).nullable(),
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().default(true),
  flavor_profile_id: uuid(),
});
export type FlavorPost = z.output<typeof FlavorPost>;

/** flavor_profile_id is not here: it cannot change (wsme refuses it as an unknown attribute). */
export const FlavorPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  enabled: bool().optional(),
});
export type FlavorPut = z.output<typeof FlavorPut>;

const PROFILE_ATTRIBUTES = ["id", "name", "provider_name", "flavor_data"];
const FLAVOR_ATTRIBUTES = ["id", "name", "description", "enabled", "flavor_profile_id"];

export const flavorProfileCatalog: CatalogObject<FlavorProfile, FlavorProfilePost, FlavorProfilePut> = {
  kind: "flavorprofile",
  displayName: "Flavor Profile",
  controllerName: "Flavor profile",
  root: "flavorprofile",
  collection: "flavorprofiles",
  links: "flavorprofile_links",
  key: "id",
  argument: "flavor_profile_",
  post: FlavorProfilePost,
  put: FlavorProfilePut,
  policy: "flavor-profile",
  profileData: { field: FLAVOR_DATA, metadata: "flavor" },
  ...catalogAttributes(PROFILE_ATTRIBUTES),
};

export const flavorCatalog: CatalogObject<Flavor, FlavorPost, FlavorPut> = {
  kind: "flavor",
  displayName: "Flavor",
  root: "flavor",
  collection: "flavors",
  links: "flavors_links",
  key: "id",
  argument: "flavor_",
  post: FlavorPost,
  put: FlavorPut,
  policy: "flavor",
  profile: { field: "flavor_profile_id", displayName: flavorProfileCatalog.displayName },
  usedBy: "flavor_id",
  ...catalogAttributes(FLAVOR_ATTRIBUTES),
};

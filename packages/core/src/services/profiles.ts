// What flavor and availability zone profiles mean to the amphora driver: their metadata checked
// against the cloud when they are made (Octavia's driver_utils.call_provider of validate_flavor and
// validate_availability_zone), and read for each amphora build (Octavia's ComputeCreate: the flavor's
// compute_flavor and amp_image_tag, the zone's compute_zone and management_network).
import { ENABLED_PROVIDERS } from "../constants";
import type { CatalogStore } from "../catalog";
import { ProfileRefused, type ComputeBuildRequest, type ProfileValidator } from "../drivers";
import { Fault } from "../faults";
import type { MetadataKind } from "../resources/provider";

/** A profile's metadata text as an object; {} when it is not one (what Octavia's API stored is JSON). */
export function profileData(text: string | null | undefined): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text ?? "null");
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Asks the profile validator whether the cloud has what `data` names. A refusal is a 400 with Octavia's
 * text, "Provider '<provider>' reports error: <what is missing>" (Octavia answers it 500: see
 * docs/api-compatibility.md). Any other error is thrown as it came (an unavailable service is a 503).
 */
export async function checkProfileData(
  profiles: ProfileValidator | undefined,
  provider: string,
  kind: MetadataKind,
  data: Record<string, unknown>,
): Promise<void> {
  if (!profiles || !Object.hasOwn(ENABLED_PROVIDERS, provider)) return;
  try {
    await (kind === "flavor" ? profiles.validateFlavor(data) : profiles.validateAvailabilityZone(data));
  } catch (e) {
    if (e instanceof ProfileRefused) throw new Fault(400, `Provider '${provider}' reports error: ${e.message}`);
    throw e;
  }
}

/** What an amphora is built with from its load balancer's profiles: ComputeBuildRequest's profile fields. */
export type BuildProfile = Pick<ComputeBuildRequest, "computeFlavor" | "imageTag" | "availabilityZone" | "managementNetwork">;

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

/**
 * Octavia's ComputeCreate arguments from the flavor's profile (compute_flavor, amp_image_tag) and the
 * availability zone's (compute_zone, management_network); null where there is no flavor, zone or
 * value (the compute driver's defaults). A resize passes its new flavor.
 */
export async function buildProfile(
  catalog: Pick<CatalogStore, "getFlavor" | "getAvailabilityZone">,
  flavorId: string | null,
  zone: string | null,
): Promise<BuildProfile> {
  const flavor = flavorId ? profileData((await catalog.getFlavor(flavorId))?.profile.flavor_data) : {};
  const az = zone ? profileData((await catalog.getAvailabilityZone(zone))?.profile.availability_zone_data) : {};
  return {
    computeFlavor: text(flavor.compute_flavor),
    imageTag: text(flavor.amp_image_tag),
    availabilityZone: text(az.compute_zone),
    managementNetwork: text(az.management_network),
  };
}

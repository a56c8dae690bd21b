// Providers and what their drivers accept in flavor and availability zone profiles
// (octavia/api/v2/types/provider.py; octavia/api/drivers/amphora_driver/flavor_schema.py,
// availability_zone_schema.py and v2/driver.py). Every enabled provider is the amphora driver
// ("octavia" is its alias), so there is one pair of metadata schemas.
import {
  ALLOW_MEMBER_SRIOV,
  ENABLED_PROVIDERS,
  PROVIDER_ALIASES,
  PROVIDER_AMPHORA,
  SRIOV_VIP,
  TOPOLOGY_ACTIVE_STANDBY,
  TOPOLOGY_SINGLE,
} from "../constants";
import { Fault, providerNotFound } from "../faults";
import { pyRepr } from "../compat/repr";

export interface ProviderInfo {
  name: string;
  description: string;
}

/** One property of a driver's JSON schema: "additionalProperties": false, so these are all it takes. */
interface MetadataProperty {
  type: "string" | "array" | "boolean";
  description: string;
  enum?: readonly string[];
}
export type MetadataSchema = Readonly<Record<string, MetadataProperty>>;

export const AMPHORA_FLAVOR_SCHEMA: MetadataSchema = {
  loadbalancer_topology: {
    type: "string",
    description:
      "The load balancer topology. One of: SINGLE - One amphora per load balancer. ACTIVE_STANDBY - Two amphora per load balancer.",
    // constants.SUPPORTED_LB_TOPOLOGIES, in its order.
    enum: [TOPOLOGY_ACTIVE_STANDBY, TOPOLOGY_SINGLE],
  },
  compute_flavor: { type: "string", description: "The compute driver flavor ID." },
  amp_image_tag: { type: "string", description: "The amphora image tag." },
  // Octavia master (v2.28, v2.30): SR-IOV for the VIP and for members.
  [SRIOV_VIP]: { type: "boolean", description: "When true, the VIP port will be created using an SR-IOV VF port." },
  [ALLOW_MEMBER_SRIOV]: {
    type: "boolean",
    description: "When true, users can request a member port be SR-IOV enabled at member creation time.",
  },
};

export const AMPHORA_AVAILABILITY_ZONE_SCHEMA: MetadataSchema = {
  compute_zone: { type: "string", description: "The compute availability zone." },
  management_network: { type: "string", description: "The management network ID for the amphora." },
  valid_vip_networks: {
    type: "array",
    description:
      "List of network IDs that are allowed for VIP use. This overrides/replaces the list of allowed networks configured in `octavia.conf`.",
  },
};

export type MetadataKind = "flavor" | "availability_zone";

const DRIVER_SCHEMAS: Readonly<Record<string, Record<MetadataKind, MetadataSchema>>> = {
  [PROVIDER_AMPHORA]: { flavor: AMPHORA_FLAVOR_SCHEMA, availability_zone: AMPHORA_AVAILABILITY_ZONE_SCHEMA },
};

/** GET /providers: the enabled providers, in configuration order. */
export const enabledProviders = (): ProviderInfo[] =>
  Object.entries(ENABLED_PROVIDERS).map(([name, description]) => ({ name, description }));

/** driver_factory.get_driver: the driver's metadata schemas, or Octavia's refusal. */
export function providerSchemas(provider: string): Record<MetadataKind, MetadataSchema> {
  if (!Object.hasOwn(ENABLED_PROVIDERS, provider)) throw new Fault(400, `Provider '${provider}' is not enabled.`);
  const schemas = DRIVER_SCHEMAS[PROVIDER_ALIASES[provider] ?? provider];
  if (!schemas) throw providerNotFound(provider);
  return schemas;
}

/** get_supported_*_metadata: the schema's keys and descriptions. */
export const metadataCapabilities = (schema: MetadataSchema): ProviderInfo[] =>
  Object.entries(schema).map(([name, p]) => ({ name, description: p.description }));

/**
 * validate_flavor / validate_availability_zone: the metadata against the driver's schema, refused
 * with 501 as call_provider answers an UnsupportedOptionError. The message is jsonschema's best_match:
 * an error about the whole object first, then, property by property in schema order, a type error
 * before an enum error.
 */
export function validateMetadata(provider: string, schema: MetadataSchema, data: unknown): void {
  const message = metadataError(schema, data);
  if (message !== undefined) throw new Fault(501, `Provider '${provider}' does not support a requested option: ${message}`);
}

function metadataError(schema: MetadataSchema, data: unknown): string | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return `${pyRepr(data)} is not of type 'object'`;
  const obj = data as Record<string, unknown>;
  const extras = Object.keys(obj)
    .filter((k) => !Object.hasOwn(schema, k))
    .sort();
  if (extras.length > 0) {
    return `Additional properties are not allowed (${extras.map(pyRepr).join(", ")} ${extras.length === 1 ? "was" : "were"} unexpected)`;
  }
  const errors: { message: string; wrongType: boolean }[] = [];
  for (const [name, p] of Object.entries(schema)) {
    if (!Object.hasOwn(obj, name)) continue;
    const v = obj[name];
    const wrongType = p.type === "array" ? !Array.isArray(v) : typeof v !== p.type;
    if (wrongType) errors.push({ message: `${name} ${pyRepr(v)} is not of type '${p.type}'`, wrongType });
    if (p.enum && !p.enum.includes(v as string))
      errors.push({ message: `${name} ${pyRepr(v)} is not one of ${pyRepr(p.enum)}`, wrongType });
  }
  return (errors.find((e) => e.wrongType) ?? errors[0])?.message;
}

/** Octavia's "basic JSON validation" of a profile's metadata: a JSON text, or InvalidOption. */
export function parseMetadata(text: string | null, option: string): unknown {
  if (text !== null) {
    try {
      return JSON.parse(text);
    } catch {
      // answered below
    }
  }
  throw new Fault(400, `${text ?? "None"} is not a valid option for ${option}`);
}

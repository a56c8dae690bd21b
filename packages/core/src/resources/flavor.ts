// Flavors and availability zones as the load-balancer create reads them (octavia/db/models.py).
// Their own API resources build on these records.

export interface FlavorProfile {
  id: string;
  name: string;
  provider_name: string;
  /** JSON text, e.g. {"loadbalancer_topology": "ACTIVE_STANDBY", "compute_flavor": "..."} */
  flavor_data: string;
}

export interface Flavor {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  flavor_profile_id: string;
}

export interface AvailabilityZoneProfile {
  id: string;
  name: string;
  provider_name: string;
  availability_zone_data: string;
}

export interface AvailabilityZone {
  name: string;
  description: string;
  enabled: boolean;
  availability_zone_profile_id: string;
}

// What the API needs: the ports (store, flow trail, catalog, change sets, health-manager configuration,
// workflow engine, network driver, certificate manager, cloud ids), settings and a logger.
import type { ChangeSetStore, CloudIdStore, HealthManagerConfigStore, LoadBalancerDeps } from "@ottava/core";

export type ApiDeps = LoadBalancerDeps & {
  /** Where a cross-pool member update stores its change set for its flow. */
  changeSets: ChangeSetStore;
  /** The health-manager addresses admins change at /v2/octavia/healthmanager. */
  healthManagerConfig: HealthManagerConfigStore;
  /** The UUIDs of cloud resources: the Neutron look-ups (/network, OTTAVA_NETWORK_DRIVER=vpc) answer them. */
  cloudIds: CloudIdStore;
};

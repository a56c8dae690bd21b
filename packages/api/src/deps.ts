// What the API needs: the ports (store, workflow engine, network driver, certificate manager, catalog), settings and a logger.
import type { CatalogStore, LoadBalancerDeps } from "@ottava/core";

export type ApiDeps = LoadBalancerDeps & {
  /** Flavors, availability zones, their profiles and quotas: the objects outside any load balancer's tree. */
  catalog: CatalogStore;
};

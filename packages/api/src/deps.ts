// What the API needs: the ports (store, workflow engine, network driver), settings and a logger.
import type { LoadBalancerDeps } from "@ottava/core";

export type ApiDeps = LoadBalancerDeps;

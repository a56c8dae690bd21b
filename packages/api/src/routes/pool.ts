// Pools (/v2/lbaas/pools) and health monitors (/v2/lbaas/healthmonitors): the generic child routes
// over their descriptors.
import { healthMonitorResource, poolResource } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { childRoutes } from "./children";

export const poolRoutes = (deps: ApiDeps) => childRoutes(poolResource, deps);

export const healthMonitorRoutes = (deps: ApiDeps) => childRoutes(healthMonitorResource, deps);

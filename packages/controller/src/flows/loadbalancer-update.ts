// Update a load balancer (Octavia: get_update_load_balancer_flow).
import { lockedChangeFlow } from "./builder";

export const loadBalancerUpdate = lockedChangeFlow(
  "Ottava: push a load balancer's new settings to its amphorae and mark it ACTIVE",
  [
    { name: "UpdateVipSecurityGroups", task: "updateVipSecurityGroups" },
    { name: "UpdateAmphoraeConfig", task: "updateAmphoraeConfig" },
  ],
  "MarkLoadBalancerActive",
);

// Update a load balancer (Octavia: get_update_load_balancer_flow).
import type { FlowSpec } from "./builder";

export const loadBalancerUpdate: FlowSpec = {
  comment: "Ottava: push a load balancer's new settings to its amphorae and mark it ACTIVE",
  steps: [
    { name: "UpdateVipSecurityGroups", task: "updateVipSecurityGroups" },
    { name: "UpdateAmphoraeConfig", task: "updateAmphoraeConfig" },
    { name: "MarkLoadBalancerActive", task: "finishChange" },
  ],
  onFailure: "failChange",
};

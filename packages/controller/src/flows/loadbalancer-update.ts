// Update a load balancer (Octavia: get_update_load_balancer_flow).
import { lockedChangeFlow } from "./builder";

export const loadBalancerUpdate = lockedChangeFlow(
  "Ottava: push a load balancer's new settings to its amphorae and mark it ACTIVE",
  [
    { name: "UpdateVipSecurityGroups", task: "updateVipSecurityGroups" },
    // vip_sg_ids decide whether the listeners' rules are made (Octavia's update_vip_sg, then the rules).
    { name: "UpdateVip", task: "updateVip" },
    { name: "UpdateAmphoraeConfig", task: "updateAmphoraeConfig" },
  ],
  "MarkLoadBalancerActive",
  "finishLoadBalancerUpdate",
);

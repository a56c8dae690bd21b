// Delete a load balancer (Octavia: get_delete_load_balancer_flow).
import { lockedChangeFlow } from "./builder";

export const loadBalancerDelete = lockedChangeFlow(
  "Ottava: remove a load balancer's amphorae and VIP and mark it DELETED",
  [
    { name: "DeleteAmphorae", task: "deleteAmphorae" },
    { name: "DeallocateVip", task: "deallocateVip" },
  ],
  "MarkLoadBalancerDeleted",
);

// Delete a load balancer (Octavia: get_delete_load_balancer_flow).
import type { FlowSpec } from "./builder";

export const loadBalancerDelete: FlowSpec = {
  comment: "Ottava: remove a load balancer's amphorae and VIP and mark it DELETED",
  steps: [
    { name: "DeleteAmphorae", task: "deleteAmphorae" },
    { name: "DeallocateVip", task: "deallocateVip" },
    { name: "MarkLoadBalancerDeleted", task: "finishChange" },
  ],
  onFailure: "failChange",
};

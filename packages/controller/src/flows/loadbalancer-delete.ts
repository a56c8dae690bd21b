// Delete a load balancer (Octavia: get_delete_load_balancer_flow).
import { lockedChangeFlow } from "./builder";

export const loadBalancerDelete = lockedChangeFlow(
  "Ottava: remove a load balancer's amphorae and VIP and mark it DELETED",
  [
    { name: "DeleteAmphorae", task: "deleteAmphorae" },
    // Octavia's NovaServerGroupDelete, after the instances (EC2 refuses while one is terminating: asked again, bounded).
    {
      name: "DeleteServerGroup",
      task: "deleteServerGroup",
      resultPath: "$.serverGroupWait",
      loopWhile: "$.serverGroupWait.waiting",
      loopWaitSecondsPath: "$.serverGroupWait.retryIn",
    },
    { name: "DeallocateVip", task: "deallocateVip" },
  ],
  "MarkLoadBalancerDeleted",
  "finishLoadBalancerDelete",
);

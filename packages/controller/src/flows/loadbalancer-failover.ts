// Fail over a load balancer (Octavia: get_failover_LB_flow): each amphora is replaced in turn,
// one at a time, so an ACTIVE_STANDBY pair keeps serving from the other amphora meanwhile.
import type { FlowSpec } from "./builder";
import { buildAmphoraeSteps } from "./loadbalancer-create";

export const loadBalancerFailover: FlowSpec = {
  comment: "Ottava: replace every amphora of a load balancer, one at a time",
  steps: [
    { name: "PlanFailover", task: "planFailover", resultPath: "$.failover" },
    {
      name: "FailoverAmphorae",
      itemsPath: "$.failover",
      itemSelector: { "lbId.$": "$.lbId", "owner.$": "$.owner", "old.$": "$$.Map.Item.Value" },
      maxConcurrency: 1,
      steps: [
        { name: "PlanReplacement", task: "planReplacement", resultPath: "$.plan" },
        ...buildAmphoraeSteps("Replacement"),
        { name: "RemoveOldAmphora", task: "removeOldAmphora" },
        { name: "RestartVrrp", task: "startVrrp" },
      ],
    },
    { name: "MarkLoadBalancerActive", task: "finishChange" },
  ],
  onFailure: "failChange",
};

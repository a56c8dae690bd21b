// Fail over a load balancer (Octavia: get_failover_LB_flow): each amphora is replaced in turn,
// one at a time, so an ACTIVE_STANDBY pair keeps serving from the other amphora meanwhile.
import { lockedChangeFlow, type MapStep } from "./builder";
import { buildAmphoraeSteps } from "./loadbalancer-create";

/** Replaces the amphorae listed at `$.failover`, one at a time: build the new one, move the VIP, remove the old one. */
export const failoverAmphorae: MapStep = {
  name: "FailoverAmphorae",
  itemsPath: "$.failover",
  itemSelector: { "lbId.$": "$.lbId", "owner.$": "$.owner", "old.$": "$$.Map.Item.Value" },
  maxConcurrency: 1,
  steps: [
    { name: "PlanReplacement", task: "planReplacement", resultPath: "$.plan" },
    ...buildAmphoraeSteps("Replacement"),
    { name: "RemoveOldAmphora", task: "removeOldAmphora" },
    // Octavia's AmphoraIndexListenerUpdate: the new amphora serves the LB's listeners (and the survivor learns its new peer).
    { name: "ListenersUpdate", task: "updateListeners" },
    { name: "RestartVrrp", task: "startVrrp" },
  ],
};

export const loadBalancerFailover = lockedChangeFlow(
  "Ottava: replace every amphora of a load balancer, one at a time",
  [{ name: "PlanFailover", task: "planFailover", resultPath: "$.failover" }, failoverAmphorae],
  "MarkLoadBalancerActive",
);

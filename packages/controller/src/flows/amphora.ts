// Amphora flows (Octavia: get_failover_amphora_flow, update_amphora_config_flow, delete_amphora_flow).
import { lockedChangeFlow, type FlowSpec } from "./builder";
import { failoverAmphorae } from "./loadbalancer-failover";

/** One amphora replaced (the API put it in `$.failover`); the LB was locked by the API. */
export const amphoraFailover = lockedChangeFlow(
  "Ottava: replace one amphora of a load balancer",
  [failoverAmphorae],
  "MarkLoadBalancerActive",
);

/** Pushes the amphora agent's configuration; takes no lock (as Octavia's). */
export const amphoraConfig: FlowSpec = {
  comment: "Ottava: refresh an amphora agent's configuration",
  steps: [{ name: "UpdateAmphoraAgentConfig", task: "updateAmphoraAgentConfig" }],
  onFailure: "logAmphoraFlowFailure",
};

/** Deletes a READY or ERROR amphora (the API moved it to PENDING_DELETE). */
export const amphoraDelete: FlowSpec = {
  comment: "Ottava: delete an amphora's instance and record",
  steps: [{ name: "DeleteAmphora", task: "deleteAmphora" }],
  onFailure: "markAmphoraError",
};

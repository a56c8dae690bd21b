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

/**
 * Moves the VIP to the amphora keepalived promoted to MASTER (the health manager took its report). Takes no
 * lock, as amphora-config: waiting for a change of the LB (a lock held for minutes) would leave the VIP on an
 * amphora that no longer serves it, and its one task writes no record.
 */
export const amphoraVipPromote: FlowSpec = {
  comment: "Ottava: move the VIP to the amphora keepalived promoted to MASTER",
  steps: [{ name: "PromoteAmphoraVip", task: "promoteAmphoraVip" }],
  onFailure: "logAmphoraFlowFailure",
};

/** Deletes a READY or ERROR amphora (the API moved it to PENDING_DELETE). */
export const amphoraDelete: FlowSpec = {
  comment: "Ottava: delete an amphora's instance and record",
  steps: [{ name: "DeleteAmphora", task: "deleteAmphora" }],
  onFailure: "markAmphoraError",
};

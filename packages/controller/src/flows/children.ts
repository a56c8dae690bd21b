// Create, update and delete of every object of an LB's tree (Octavia's listener, pool, member,
// health monitor, L7 policy and L7 rule flows): push the new configuration to the amphorae, then
// finish the change; on failure the object goes to ERROR and the rest back to ACTIVE.
// The kinds' own entry, not core's whole one: the deploy program (stacks/) takes the flows, and with them
// what they import (stacks/README.md, "How the stacks reach the packages").
import { CHILD_KINDS } from "@ottava/core/kinds";
import { lockedChangeFlow, type FlowSpec } from "./builder";

const ACTIONS = ["create", "update", "delete"] as const;
/** The configuration pushed to the amphorae, then the change finished. */
const PUSH_CONFIG = [{ name: "UpdateAmphoraeConfig", task: "updateAmphoraeConfig" }];
/** A listener's change also changes the rules of the LB's security group (Octavia's UpdateVIP, UpdateVIPForDelete). */
const LISTENER_STEPS = [...PUSH_CONFIG, { name: "UpdateVip", task: "updateVip" }];
/**
 * A change of the members an LB has (Octavia's member create and delete, and batch update flows: CalculateDelta,
 * HandleNetworkDeltas, GetAmphoraeNetworkConfigs, AmphoraePostNetworkPlug, ListenersUpdate): the amphorae
 * plugged into their members' networks, then the configuration pushed, by one task. A pool's delete
 * recomputes them too, which Octavia's pool delete does not (its members' ports would stay plugged).
 */
export const NETWORK_DELTA_STEPS = [{ name: "HandleNetworkDeltas", task: "handleNetworkDeltas", revert: "revertNetworkDeltas" }];
const stepsOf = (kind: string, action: string) =>
  kind === "listener"
    ? LISTENER_STEPS
    : (kind === "member" && action !== "update") || (kind === "pool" && action === "delete")
      ? NETWORK_DELTA_STEPS
      : PUSH_CONFIG;

export const CHILD_FLOWS: Record<string, FlowSpec> = {
  ...Object.fromEntries(
    CHILD_KINDS.flatMap((kind) =>
      ACTIONS.map((action) => [
        `${kind}-${action}`,
        lockedChangeFlow(`Ottava: ${action} a ${kind} and apply the load balancer's configuration to its amphorae`, stepsOf(kind, action)),
      ]),
    ),
  ),
  // A pool's batch member update: one flow for every member it creates, updates and deletes.
  "member-batch-update": lockedChangeFlow(
    "Ottava: batch update a pool's members and apply the load balancer's configuration to its amphorae",
    NETWORK_DELTA_STEPS,
  ),
};

// The cross-pool member batch update (PUT /v2/lbaas/pools/members): the API stored the change set as
// numbered chunks in the LB's partition (too big for a flow's input); the flow applies them chunk by
// chunk, pushes the configuration to the amphorae ONCE and finishes. On any failure the revert
// restores the members as they were (chunk by chunk) and re-pushes the configuration; the failure
// handler then leaves everything ACTIVE (the touched members in ERROR only if the restore failed).
import type { FlowSpec } from "./builder";
import { NETWORK_DELTA_STEPS } from "./children";

export const memberCrossPoolUpdate: FlowSpec = {
  comment: "Ottava: batch update members across the pools of a load balancer and apply its configuration to its amphorae",
  steps: [
    { name: "PlanMemberChunks", task: "planMemberChunks", resultPath: "$.chunkIndexes", revert: "restoreCrossPoolMembers" },
    {
      name: "ApplyMemberChunks",
      itemsPath: "$.chunkIndexes",
      itemSelector: { "lbId.$": "$.lbId", "owner.$": "$.owner", "chunk.$": "$$.Map.Item.Value" },
      maxConcurrency: 4,
      steps: [{ name: "ApplyMemberChunk", task: "applyMemberChunk" }],
    },
    // The networks the members are on now plugged into the amphorae, then the configuration pushed.
    ...NETWORK_DELTA_STEPS,
    { name: "FinishCrossPoolChange", task: "finishCrossPoolChange" },
  ],
  onFailure: "failCrossPoolChange",
};

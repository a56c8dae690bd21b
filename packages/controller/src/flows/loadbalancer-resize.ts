// Resize a load balancer (the resize spec: a failover with the new flavor). Every new amphora is
// built first, one at a time, checking the cancel mark before each; then one conditional write
// commits (or, if a cancel came, the new amphorae are removed and the old ones stay); only then are
// the old amphorae removed and, last, the LB's flavor_id written.
import type { FlowSpec, MapStep } from "./builder";
import { buildAmphoraeSteps } from "./loadbalancer-create";

/** Builds the replacement of each amphora listed at `$.resize.old` with the new compute flavor; removes nothing. */
export const resizeBuildAmphorae: MapStep = {
  name: "ResizeBuildAmphorae",
  itemsPath: "$.resize.old",
  itemSelector: {
    "lbId.$": "$.lbId",
    "owner.$": "$.owner",
    "computeFlavor.$": "$.computeFlavor",
    "newFlavorId.$": "$.newFlavorId",
    "old.$": "$$.Map.Item.Value",
  },
  maxConcurrency: 1,
  steps: [{ name: "ResizePlanReplacement", task: "resizePlanReplacement", resultPath: "$.plan" }, ...buildAmphoraeSteps("Resize")],
};

export const loadBalancerResize: FlowSpec = {
  comment: "Ottava: resize a load balancer: new amphorae on the new flavor, then the old ones go and flavor_id changes",
  steps: [
    { name: "ResizeStart", task: "resizeStart", revert: "resizeRemoveNewAmphorae", resultPath: "$.resize" },
    resizeBuildAmphorae,
    { name: "ResizeCommit", task: "resizeCommit", resultPath: "$.commit" },
    { name: "ResizeRemoveOldAmphorae", task: "resizeRemoveOldAmphorae" },
    // The new amphorae serve the LB's listeners (Octavia's failover: AmphoraIndexListenerUpdate).
    { name: "ResizeListenersUpdate", task: "updateListeners" },
    { name: "ResizeRestartVrrp", task: "startVrrp" },
    { name: "ResizeSetFlavor", task: "resizeSetFlavor" },
    { name: "MarkLoadBalancerActive", task: "finishResize" },
  ],
  onFailure: "resizeFail",
};

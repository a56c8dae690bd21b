// Create a load balancer (Octavia: get_create_load_balancer_flow with its amphora subflows).
import { lockedChangeFlow, type Step } from "./builder";

/** Builds, wires and allocates the amphorae in `$.plan`; state names get `prefix` to stay unique. */
export function buildAmphoraeSteps(prefix: string): Step[] {
  return [
    { name: `${prefix}CreateAmphoraeInDB`, task: "createAmphoraeInDB", revert: "markAmphoraeDeleted" },
    { name: `${prefix}ComputeCreate`, task: "computeCreate", revert: "computeDelete" },
    // Octavia's ComputeWait (retried by ComputeRetry): one look at the instances per run, the waits in the state machine.
    {
      name: `${prefix}ComputeWait`,
      task: "computeWait",
      resultPath: "$.computeWait",
      loopWhile: "$.computeWait.waiting",
      loopWaitSecondsPath: "$.computeWait.retryIn",
    },
    // Octavia's AmphoraComputeConnectivityWait (retried by AmpRetry): one GET info per run, the waits in the state machine.
    {
      name: `${prefix}AmphoraeConnectivityWait`,
      task: "amphoraeConnectivityWait",
      resultPath: "$.agentWait",
      loopWhile: "$.agentWait.waiting",
      loopWaitSecondsPath: "$.agentWait.retryIn",
    },
    { name: `${prefix}PlugVip`, task: "plugVip", revert: "unplugVip" },
    { name: `${prefix}AmphoraePostVipPlug`, task: "postVipPlug" },
    { name: `${prefix}MarkAmphoraeAllocated`, task: "markAmphoraeAllocated" },
  ];
}

export const loadBalancerCreate = lockedChangeFlow(
  "Ottava: create a load balancer's amphorae, plug its VIP and mark it ACTIVE",
  [
    { name: "PlanAmphorae", task: "planAmphorae", resultPath: "$.plan" },
    // Octavia's NovaServerGroupCreate + UpdateLBServerGroupInDB (anti-affinity, ACTIVE_STANDBY only; else nothing).
    { name: "CreateServerGroup", task: "createServerGroup", revert: "revertServerGroup" },
    ...buildAmphoraeSteps(""),
    // Octavia's plug_vip: the LB's security group gets the rules of its listeners (and VRRP's).
    { name: "UpdateVip", task: "updateVip" },
    { name: "StartVrrp", task: "startVrrp" },
    // Octavia's create_all_listeners_flow (ListenersUpdate): a fully populated create's listeners, pools and members served.
    { name: "ListenersUpdate", task: "updateListeners" },
  ],
  "MarkLoadBalancerActive",
  "finishLoadBalancerCreate",
);

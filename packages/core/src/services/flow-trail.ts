// The flow trail (an Ottava extension beyond Octavia): every flow run on a load balancer, with its
// start, end, outcome, the ASL state that failed and its error. The start is written in the
// transaction that takes the lock (LockRequest.trail), the end by the flows' final tasks; the API reads
// it at GET /v2/lbaas/loadbalancers/{id}/flows. Recording them also emits the flow metrics
// (FlowsStarted, FlowsSucceeded, FlowsFailed, FlowDuration; dimension `flow`).
import { requireFound } from "../faults";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import { authorize, type RequestContext } from "../policy";
import type { FlowEnd, FlowStart, FlowTrailEntry, FlowTrailStore, LoadBalancerStore } from "../ports";

export const FLOW_TRAIL_POLICY = "os_load-balancer_api:loadbalancer:get_flows";

/** Longest error cause kept in a trail entry (characters). */
export const FLOW_CAUSE_MAX = 1000;

/** What a Map state's iteration reports when one of its steps failed (see flows/builder.ts). */
export const ITERATION_FAILED = "IterationFailed";

/** GET /v2/lbaas/loadbalancers/{id}/flows: the LB's flow runs, newest first (admins and the LB's project only). */
export async function getFlowTrail(
  deps: { store: LoadBalancerStore; trail: FlowTrailStore },
  ctx: RequestContext,
  lbId: string,
  limit?: number,
): Promise<{ flows: FlowTrailEntry[] }> {
  const lb = requireFound(await deps.store.getLoadBalancer(lbId), "Load Balancer", lbId);
  authorize(ctx, FLOW_TRAIL_POLICY, lb.record.project_id);
  return { flows: await deps.trail.flowTrail(lbId, limit) };
}

/** Counts a flow's start; its trail entry was written in the transaction that took the lock. */
export function flowStarted(deps: { metrics: Metrics }, start: FlowStart): void {
  deps.metrics.count("FlowsStarted", 1, { flow: start.flow });
}

/**
 * Records a flow's end (once); never fails the caller. The end that is written is counted:
 * FlowsSucceeded, or FlowsFailed (FAILED, or REPAIRED: the execution died holding the lock), and
 * FlowDuration from the entry's start to `end.endedAt` (not for REPAIRED: that end is the repair's).
 */
export async function recordFlowEnd(
  deps: { trail: FlowTrailStore; log: Logger; metrics: Metrics },
  lbId: string,
  execution: string,
  end: FlowEnd,
): Promise<void> {
  let ended;
  try {
    ended = await deps.trail.recordFlowEnd(lbId, execution, end);
  } catch (e) {
    deps.log.warn("flow trail: end not recorded", { lbId, execution, outcome: end.outcome, error: String(e) });
    return;
  }
  if (!ended) {
    deps.log.debug("flow trail: end already recorded, or no running entry", { lbId, execution, outcome: end.outcome });
    return;
  }
  const flow = { flow: ended.flow };
  deps.metrics.count(end.outcome === "SUCCEEDED" ? "FlowsSucceeded" : "FlowsFailed", 1, flow);
  if (end.outcome !== "REPAIRED") deps.metrics.timing("FlowDuration", Date.parse(end.endedAt) - Date.parse(ended.startedAt), flow);
}

type StepError = { Error?: unknown; Cause?: unknown } | undefined;

/**
 * The end of a failed flow from its failure handler's input: `failedStep` (set by the Catch of the
 * state that failed) and `error` ({Error, Cause}). A failed Map iteration reports its own failed
 * step and error inside its Cause; those are the ones recorded (the innermost).
 */
export function failedFlowEnd(
  input: Record<string, unknown> & { failedStep?: unknown; error?: unknown },
  endedAt = new Date().toISOString(),
): FlowEnd {
  let step = typeof input.failedStep === "string" ? input.failedStep : null;
  let error = input.error as StepError;
  for (let depth = 0; depth < 5 && error?.Error === ITERATION_FAILED && typeof error.Cause === "string"; depth++) {
    const inner = parseJson(error.Cause) as { failedStep?: unknown; error?: StepError } | undefined;
    if (!inner || typeof inner !== "object" || !inner.error) break;
    if (typeof inner.failedStep === "string") step = inner.failedStep;
    error = inner.error;
  }
  return {
    outcome: "FAILED",
    endedAt,
    failedStep: step,
    error: error ? { error: typeof error.Error === "string" ? error.Error : null, cause: sanitizeCause(error.Cause) } : null,
  };
}

/**
 * An error's cause as the trail keeps it: a Lambda error's JSON (errorType, errorMessage, trace)
 * reduced to its message, credentials-looking values masked, at most FLOW_CAUSE_MAX characters.
 */
export function sanitizeCause(cause: unknown): string | null {
  if (cause === undefined || cause === null) return null;
  let text = typeof cause === "string" ? cause : JSON.stringify(cause);
  const lambda = parseJson(text) as { errorMessage?: unknown } | undefined;
  if (lambda && typeof lambda === "object" && typeof lambda.errorMessage === "string") text = lambda.errorMessage;
  text = text
    // user:password@ in URLs
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, "$1***@")
    // password=..., "token": "...", X-Auth-Token: ..., api_key=..., Authorization: Bearer ...
    .replace(
      /((?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|authorization|credentials?)["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic)\s+)?[^\s"',;&})\]]+/gi,
      "$1***",
    )
    // Bearer / Basic credentials on their own
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, "$1 ***");
  return text.length > FLOW_CAUSE_MAX ? `${text.slice(0, FLOW_CAUSE_MAX - 1)}…` : text;
}

function parseJson(text: string): unknown {
  if (!/^\s*[{[]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

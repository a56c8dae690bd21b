// The event notifications of the flows (Octavia's SendCreateNotification, SendUpdateNotification and
// SendDeleteNotification, and Ottava's resize and cross-pool events): which task sends which events,
// built from the flow's input and the LB as stored. runTask sends them after the task's handler, so a
// finishing task sends its event after its release write, and sends it again, with the same message
// id, when it runs again after releasing (a retry, a duplicate delivery, the local runner continuing
// an execution): an event is never lost to the lock, and a flow that fails before its end announces
// no end.
import {
  EVENT_TYPES,
  changeRefs,
  eventOf,
  loadBalancerPayload,
  type ChangeSet,
  type EventNotification,
  type LoadBalancer,
} from "@ottava/core";
import type { NotifyingTask } from "../flows/notifying";
import type { FlowInput, TaskContext } from "./context";

type Input = FlowInput & Record<string, unknown>;

interface Notifying {
  /**
   * Sent after the lock's release (the finishing tasks, the resize's failure handler): sent again when
   * the task runs after its own execution released the lock. Else (the resize's start) sent while the
   * lock is held, after the handler.
   */
  afterRelease: boolean;
  events: (input: Input, lb: LoadBalancer, payload: Record<string, unknown>) => { type: string; payload: Record<string, unknown> }[];
}

const cancelled = (input: Input) => (input.commit as { cancelled?: boolean } | undefined)?.cancelled === true;
/** The resize's flavors: the old one as resizeStart read it (its result), else the LB's (a failure before it answered). */
const flavors = (input: Input, lb: LoadBalancer) => ({
  old_flavor_id: (input.resize as { oldFlavorId?: string | null } | undefined)?.oldFlavorId ?? lb.flavor_id,
  new_flavor_id: (input.newFlavorId as string | undefined) ?? null,
});

/** The events of each notifying task (flows/notifying.ts: the stacks give only their functions events:PutEvents). */
const NOTIFYING: Record<NotifyingTask, Notifying> = {
  finishLoadBalancerCreate: { afterRelease: true, events: (_i, _lb, payload) => [{ type: EVENT_TYPES.create, payload }] },
  finishLoadBalancerUpdate: { afterRelease: true, events: (_i, _lb, payload) => [{ type: EVENT_TYPES.update, payload }] },
  finishLoadBalancerDelete: { afterRelease: true, events: (_i, _lb, payload) => [{ type: EVENT_TYPES.delete, payload }] },
  resizeStart: { afterRelease: false, events: (i, lb, p) => [{ type: EVENT_TYPES.resizeStart, payload: { ...p, ...flavors(i, lb) } }] },
  finishResize: {
    afterRelease: true,
    events: (i, lb, p) => [{ type: cancelled(i) ? EVENT_TYPES.resizeCancel : EVENT_TYPES.resizeEnd, payload: { ...p, ...flavors(i, lb) } }],
  },
  resizeFail: { afterRelease: true, events: (i, lb, p) => [{ type: EVENT_TYPES.resizeError, payload: { ...p, ...flavors(i, lb) } }] },
  // The pools the update changed (the lock marked them): bounded, where its members could be thousands.
  finishCrossPoolChange: {
    afterRelease: true,
    events: (i, _lb, p) => [
      {
        type: EVENT_TYPES.crossPoolUpdate,
        payload: {
          ...p,
          pool_ids: changeRefs(i.changes as ChangeSet)
            .filter((r) => r.kind === "pool")
            .map((r) => r.id),
        },
      },
    ],
  },
};

/** A task's notifications, if it sends any. */
export const notifyingOf = (task: string): Notifying | undefined => (NOTIFYING as Record<string, Notifying>)[task];

/** The flavor's metadata (its profile's flavor_data), as Octavia's payload carries it; {} without one. */
async function flavorMetadata(ctx: TaskContext, flavorId: string | null): Promise<Record<string, unknown>> {
  if (!flavorId) return {};
  const found = await ctx.catalog.getFlavor(flavorId);
  try {
    return found ? (JSON.parse(found.profile.flavor_data) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The events `task` sends for this input (none if it sends none, or the settings turn them off). */
export async function eventsOf(task: string, input: Input, ctx: TaskContext): Promise<EventNotification[]> {
  const notifying = notifyingOf(task);
  if (!notifying || !ctx.config.eventNotifications || !ctx.notifier) return [];
  const lb = (await ctx.store.getLoadBalancer(input.lbId))?.record;
  if (!lb) return [];
  const payload = loadBalancerPayload(lb, await flavorMetadata(ctx, lb.flavor_id));
  const requestId = typeof input.requestId === "string" ? input.requestId : null;
  return notifying.events(input, lb, payload).map((e) => eventOf(e.type, input.owner, lb.project_id, requestId, e.payload));
}

/** Sends the task's events (the notifier never throws: an event never fails the change it reports). */
export async function sendEvents(task: string, input: Input, ctx: TaskContext): Promise<void> {
  const events = await eventsOf(task, input, ctx);
  if (events.length) await ctx.notifier!.notify(events);
}

// The event notifications' bus: the flows' notifying tasks (packages/controller/src/flows/notifying.ts)
// put Octavia's events and Ottava's on it (source "ottava", detail-type the event type); the deployer's
// rules route them (docs/operations.md, "Event notifications"). Only those tasks' functions are told the
// bus (OTTAVA_EVENT_BUS_NAME) and may events:PutEvents, on this bus only.
import { notifies } from "@ottava/controller/flows";

export function createEvents() {
  const bus = new aws.cloudwatch.EventBus("Events", { name: `${$app.name}-${$app.stage}-events` });
  return {
    bus,
    /** Whether a task's function sends events. */
    notifies,
    /** The settings of those functions. */
    environment: { OTTAVA_EVENT_BUS_NAME: bus.name },
    /** Their permission: PutEvents on this bus. */
    permissions: [{ actions: ["events:PutEvents"], resources: [bus.arn] }],
  };
}

export type Events = ReturnType<typeof createEvents>;

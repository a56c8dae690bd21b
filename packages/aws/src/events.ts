// The EventBridge adapter of core's Notifier port: each event one PutEvents entry on the settings' bus
// (OTTAVA_EVENT_BUS_NAME, the stacks' bus), Source "ottava", DetailType the event type, Detail Octavia's
// message with its context (eventDetail). One signed JSON request (@ottava/edge's awsJsonClient, as
// Secrets Manager's), not the SDK's EventBridge client. PutEvents answers 200 even when entries fail:
// the entries it answers with an ErrorCode are sent again, a few times; what still fails then (or
// whose request failed) is logged and counted (EventNotificationsFailed), never thrown: an event
// never fails the change it reports.
import { EVENT_SOURCE, eventDetail, type Config, type EventNotification, type Logger, type Metrics, type Notifier } from "@ottava/core";
import { awsJsonClient, type AwsJsonCall, type AwsJsonOptions } from "@ottava/edge";

/** Attempts of an entry that PutEvents answers with an ErrorCode (the first included). */
export const PUT_EVENTS_ATTEMPTS = 4;
/** EventBridge's limit of an entry (Source, DetailType, Detail, Resources and the bus name, in UTF-8 bytes). */
export const MAX_ENTRY_BYTES = 256 * 1024;
/** PutEvents takes at most 10 entries a request. */
const BATCH = 10;

/** An EventBridge caller for the settings (`opts`: a Region and credentials other than the process's, for tests). */
export function eventBridgeClient(config: Pick<Config, "eventbridgeEndpoint">, opts: Omit<AwsJsonOptions, "endpoint"> = {}): AwsJsonCall {
  return awsJsonClient(
    { signingName: "events", targetPrefix: "AWSEvents", jsonVersion: "1.1" },
    { ...opts, ...(config.eventbridgeEndpoint ? { endpoint: config.eventbridgeEndpoint } : {}) },
  );
}

interface Entry {
  Source: string;
  DetailType: string;
  Detail: string;
  EventBusName?: string;
}

const entrySize = (e: Entry) =>
  Buffer.byteLength(e.Source) + Buffer.byteLength(e.DetailType) + Buffer.byteLength(e.Detail) + Buffer.byteLength(e.EventBusName ?? "");

export interface EventBridgeNotifierOptions extends Omit<AwsJsonOptions, "endpoint"> {
  /** Milliseconds before the first resend of failed entries (doubled each time). */
  retryBaseMs?: number;
}

export function eventBridgeNotifier(
  config: Pick<Config, "eventbridgeEndpoint" | "eventBusName">,
  log: Logger,
  metrics: Metrics,
  opts: EventBridgeNotifierOptions = {},
): Notifier {
  const { retryBaseMs = 200, ...clientOpts } = opts;
  const call = eventBridgeClient(config, clientOpts);
  const failed = (e: EventNotification, reason: string) => {
    log.error("event notification not sent", { eventType: e.eventType, messageId: e.messageId, execution: e.execution, reason });
    metrics.count("EventNotificationsFailed", 1, { eventType: e.eventType });
  };
  const entryOf = (e: EventNotification): Entry => ({
    Source: EVENT_SOURCE,
    DetailType: e.eventType,
    Detail: JSON.stringify(eventDetail(e)),
    ...(config.eventBusName ? { EventBusName: config.eventBusName } : {}),
  });
  /** Sends one batch, resending the entries answered with an ErrorCode. */
  const send = async (batch: { event: EventNotification; entry: Entry }[]) => {
    let pending = batch;
    let reason = "";
    for (let attempt = 1; pending.length > 0 && attempt <= PUT_EVENTS_ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, retryBaseMs * 2 ** (attempt - 2)));
      try {
        const out = await call("PutEvents", { Entries: pending.map((p) => p.entry) }, `EventBridge PutEvents of ${pending.length} events`);
        const results = (out.Entries ?? []) as { EventId?: string; ErrorCode?: string; ErrorMessage?: string }[];
        // The answer's entries are the request's, in order: a failed one has an ErrorCode and no EventId.
        const next = pending.filter((_, i) => results[i]?.ErrorCode !== undefined || results[i]?.EventId === undefined);
        const first = results.find((r) => r.ErrorCode !== undefined);
        if (next.length)
          reason = first ? `${first.ErrorCode}: ${first.ErrorMessage ?? ""}` : `FailedEntryCount ${String(out.FailedEntryCount)}`;
        pending = next;
      } catch (e) {
        // The request itself failed (after edge's own retries of throttling and 5xx answers).
        reason = (e as Error).message;
      }
    }
    for (const p of pending) failed(p.event, reason);
    for (const p of batch)
      if (!pending.includes(p)) log.debug("event notification sent", { eventType: p.event.eventType, messageId: p.event.messageId });
  };
  return {
    async notify(events) {
      const ready: { event: EventNotification; entry: Entry }[] = [];
      for (const event of events) {
        const entry = entryOf(event);
        if (entrySize(entry) > MAX_ENTRY_BYTES)
          failed(event, `the entry is ${entrySize(entry)} bytes, over EventBridge's ${MAX_ENTRY_BYTES}`);
        else ready.push({ event, entry });
      }
      for (let i = 0; i < ready.length; i += BATCH) await send(ready.slice(i, i + BATCH));
    },
  };
}

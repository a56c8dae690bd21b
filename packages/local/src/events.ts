// npm start's event notifications: each event one JSON line appended to <data dir>/events.jsonl, shaped
// as EventBridge delivers it (source, detail-type, detail, time), so what a consumer reads from a rule's
// target on AWS can be tried locally with `tail -f`. Like every notifier it never throws: a line it
// cannot write is logged.
import { appendFile } from "node:fs/promises";
import { EVENT_SOURCE, eventDetail, type Logger, type Notifier } from "@ottava/core";

export function jsonLinesNotifier(file: string, log: Logger): Notifier {
  return {
    async notify(events) {
      const time = new Date().toISOString();
      const lines = events.map(
        (e) => JSON.stringify({ time, source: EVENT_SOURCE, "detail-type": e.eventType, detail: eventDetail(e) }) + "\n",
      );
      await appendFile(file, lines.join("")).catch((err: Error) =>
        log.error("event notification not written", { file, reason: err.message }),
      );
    },
  };
}

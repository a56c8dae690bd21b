// A test proxy in front of one moto_server for EventBridge's PutEvents: moto answers every valid entry
// with an EventId, so the failure AWS reports with a 200 (FailedEntryCount, an entry's ErrorCode, e.g.
// ThrottlingException or InternalFailure) is added here: the next `failEntries` entries are answered
// failed and not forwarded (EventBridge did not take them); the rest go to moto, whose answers are
// merged back in order. Every other request is forwarded as it is. Test support only.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface EventsProxy {
  endpoint: string;
  /** Entries still to answer failed (counting down as they are). */
  failEntries: number;
  /** The PutEvents requests seen, each its number of entries. */
  putEvents: number[];
  stop(): Promise<void>;
}

const body = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });

export async function startEventsProxy(motoEndpoint: string): Promise<EventsProxy> {
  const forward = (req: IncomingMessage, text: string) =>
    fetch(new URL(req.url ?? "/", motoEndpoint), {
      method: req.method ?? "POST",
      // Moto does not check signatures: the rewritten body may keep the original's.
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k)),
      ) as Record<string, string>,
      ...(req.method === "GET" || req.method === "HEAD" ? {} : { body: text }),
    });
  const proxy: EventsProxy = { endpoint: "", failEntries: 0, putEvents: [], stop: async () => {} };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      if (req.headers["x-amz-target"] !== "AWSEvents.PutEvents") {
        const answer = await forward(req, text);
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
        res.end(await answer.text());
        return;
      }
      const input = JSON.parse(text) as { Entries: unknown[] };
      proxy.putEvents.push(input.Entries.length);
      const failed = input.Entries.map(() => proxy.failEntries > 0 && proxy.failEntries-- > 0);
      const passed = input.Entries.filter((_, i) => !failed[i]);
      let moto: { EventId?: string; ErrorCode?: string }[] = [];
      if (passed.length) {
        const answer = await forward(req, JSON.stringify({ ...input, Entries: passed }));
        moto = ((await answer.json()) as { Entries: typeof moto }).Entries;
      }
      const entries = failed.map((f) =>
        f ? { ErrorCode: "InternalFailure", ErrorMessage: "injected by the test's proxy" } : moto.shift()!,
      );
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
      res.end(JSON.stringify({ FailedEntryCount: entries.filter((e) => e.ErrorCode).length, Entries: entries }));
    })().catch((e: Error) => {
      res.writeHead(500);
      res.end(e.message);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.stop = () => new Promise((r) => server.close(() => r()));
  return proxy;
}

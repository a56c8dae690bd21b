// The structured log lines, as Powertools' logger writes them on the process's stdout and stderr.
import { describe, expect, it } from "vitest";
import { createLogger } from "@ottava/edge";
import { captureOutput, jsonLines } from "./support/output";

describe("createLogger", () => {
  it("writes one JSON object a line: level, message, timestamp, service, the logger's keys and the fields at top level", () => {
    const lines = captureOutput();
    const log = createLogger({ service: "ottava-test", region: "r1" }, "info");
    log.info("request", { method: "GET", status: 200, nested: { a: [1, 2] } });
    expect(lines).toHaveLength(1);
    const [line] = jsonLines(lines);
    expect(line).toMatchObject({
      level: "INFO",
      message: "request",
      service: "ottava-test",
      region: "r1",
      method: "GET",
      status: 200,
      nested: { a: [1, 2] },
    });
    expect(line!.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines[0]).toContain('"message":"request"');
  });

  it("writes nothing below its level, and WARN and ERROR lines like the others", () => {
    const lines = captureOutput();
    const log = createLogger({ service: "ottava-test" }, "warn");
    log.debug("d");
    log.info("i");
    log.warn("w", { n: 1 });
    log.error("e", { error: String(new Error("boom")) });
    expect(jsonLines(lines).map((l) => [l.level, l.message])).toEqual([
      ["WARN", "w"],
      ["ERROR", "e"],
    ]);
    expect(jsonLines(lines)[1]!.error).toBe("Error: boom");
  });

  it("child() adds its fields to every line, the parent's stay as they were", () => {
    const lines = captureOutput();
    const log = createLogger({ service: "ottava-test" }, "debug");
    const req = log.child({ requestId: "req-1" });
    const task = req.child({ task: "t", execution: "x-1" });
    task.debug("task ran", { ms: 3 });
    req.info("request");
    log.info("plain");
    expect(jsonLines(lines).map(({ timestamp, sampling_rate, ...l }) => l)).toEqual([
      { level: "DEBUG", message: "task ran", service: "ottava-test", requestId: "req-1", task: "t", execution: "x-1", ms: 3 },
      { level: "INFO", message: "request", service: "ottava-test", requestId: "req-1" },
      { level: "INFO", message: "plain", service: "ottava-test" },
    ]);
  });

  it("masks the values of keys named like credentials, at any depth, fields and logger keys alike", () => {
    const lines = captureOutput();
    const log = createLogger({ service: "ottava-test", apiKey: "k-123" }, "info").child({ token: "t-456" });
    log.info("login", { user: "admin", password: "p-789", auth: { Authorization: "Bearer b-0", client_secret: "s-1", keep: "visible" } });
    const out = lines.join("\n");
    for (const secret of ["k-123", "t-456", "p-789", "b-0", "s-1"]) expect(out).not.toContain(secret);
    expect(jsonLines(lines)[0]).toMatchObject({
      user: "admin",
      apiKey: "***",
      token: "***",
      password: "***",
      auth: { Authorization: "***", client_secret: "***", keep: "visible" },
    });
  });
});

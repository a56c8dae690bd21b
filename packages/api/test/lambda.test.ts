// The API's Lambda entry: its settings are made on the first request, once, not when the module loads.
import { afterEach, describe, expect, it, vi } from "vitest";

const event = (path: string) => ({
  version: "2.0",
  routeKey: "$default",
  rawPath: path,
  rawQueryString: "",
  headers: { host: "api.example.com" },
  requestContext: {
    http: { method: "GET", path, protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "test" },
    requestId: "r1",
    stage: "$default",
  },
  isBase64Encoded: false,
});

afterEach(() => vi.unstubAllEnvs());

describe("the API's Lambda handler", () => {
  it("loads without settings, and answers once they are there", async () => {
    vi.stubEnv("OTTAVA_STATE_MACHINE_ARN_PREFIX", "");
    const { handler } = await import("../src/lambda");
    // Importing made nothing: a bad setting is found by the first request, which fails.
    vi.stubEnv("OTTAVA_LOG_LEVEL", "loud");
    await expect(handler(event("/") as never, {} as never)).rejects.toThrow("OTTAVA_LOG_LEVEL must be one of");
    // The failure is not kept: the next request makes the settings again.
    vi.stubEnv("OTTAVA_LOG_LEVEL", "error");
    vi.stubEnv("OTTAVA_STATE_MACHINE_ARN_PREFIX", "arn:aws:states:us-east-1:000000000000:stateMachine:ottava-test-");
    const res = (await handler(event("/") as never, {} as never)) as { statusCode: number; body: string };
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).versions.some((v: { status: string }) => v.status === "CURRENT")).toBe(true);
    // Made once: later changes to the environment do not change a warm function.
    vi.stubEnv("OTTAVA_LOG_LEVEL", "loud");
    expect(((await handler(event("/") as never, {} as never)) as { statusCode: number }).statusCode).toBe(200);
  });
});

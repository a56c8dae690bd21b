// Unavailability as core reads it: an error its adapter marked (markUnavailable), or one whose cause
// is; what it is called, and the API's 503. Which errors the AWS SDK's adapters mark is
// packages/edge/test/unavailable.test.ts.
import { describe, expect, it } from "vitest";
import { TransientError, isUnavailable, markUnavailable, serviceUnavailable, unavailableReason } from "@ottava/core";

const named = (name: string, extra: object = {}) => Object.assign(new Error("x"), { name, ...extra });

describe("isUnavailable", () => {
  it("is the mark its adapter set, on the error or on its cause, and nothing else", () => {
    const marked = markUnavailable(named("ThrottlingException"));
    expect(isUnavailable(marked)).toBe(true);
    expect(isUnavailable(new Error("wrapped", { cause: marked }))).toBe(true);
    expect(isUnavailable(new Error("twice", { cause: new Error("wrapped", { cause: marked }) }))).toBe(true);
    // Unmarked, the names of unavailability say nothing here: only the adapter knows its service's errors.
    for (const e of [
      named("ThrottlingException"),
      named("Error", { code: "ECONNRESET" }),
      named("TransientError"),
      "a string",
      undefined,
      null,
    ])
      expect(isUnavailable(e)).toBe(false);
  });

  it("marks the error itself: the same object, its class, name and fields", () => {
    class Refused extends Error {}
    const e = Object.assign(new Refused("no"), { $metadata: { attempts: 4 } });
    expect(markUnavailable(e)).toBe(e);
    expect(e).toBeInstanceOf(Refused);
    expect({ ...e }).toEqual({ $metadata: { attempts: 4 } });
  });
});

describe("what an unavailability error is called", () => {
  it("is its name, or Node's code for a network error; the API's 503 names it and nothing else", () => {
    expect(unavailableReason(named("ProvisionedThroughputExceededException"))).toBe("ProvisionedThroughputExceededException");
    expect(unavailableReason(named("Error", { code: "ECONNRESET" }))).toBe("ECONNRESET");
    expect(serviceUnavailable(named("InternalServerError", { message: "secret detail" }))).toMatchObject({
      status: 503,
      message: "The service is temporarily unavailable (InternalServerError). Please retry the request later.",
    });
    expect(new TransientError("ThrottlingException: Rate exceeded")).toMatchObject({ name: "TransientError" });
  });
});

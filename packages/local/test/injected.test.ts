// npm start's injected faults and latency (src/injected.ts): read from its settings, refused when not understood, and
// plugged in where the settings say (the no-op drivers; the stores' DynamoDB client; each task's requests labelled).
import { describe, expect, it } from "vitest";
import { loadConfig } from "@ottava/core";
import { createClients } from "@ottava/db";
import { DynamoFaults, freshTable } from "@ottava/db/testing";
import { readInjected, storesDecorator, taskDecorator } from "../src/injected";

describe("npm start's injected faults and latency", () => {
  it("are off unless set: the no-op drivers and the SDK's own request handler, untouched", () => {
    for (const off of [undefined, "", "  "]) {
      const injected = readInjected({ OTTAVA_NOOP_FAULTS: off, OTTAVA_NOOP_LATENCY: off, OTTAVA_DYNAMODB_FAULTS: off });
      expect(injected).toEqual({ noopDrivers: undefined, dynamoFaults: undefined });
      expect(storesDecorator(injected.dynamoFaults, undefined)).toBeUndefined();
      expect(taskDecorator(injected.dynamoFaults, undefined)).toBeUndefined();
    }
    expect(createClients("http://127.0.0.1:9", storesDecorator(undefined, undefined)).client.config.requestHandler.constructor.name).toBe(
      "NodeHttpHandler",
    );
  });

  it("are no settings of the product's configuration", () => {
    const config = loadConfig({
      OTTAVA_NOOP_FAULTS: "compute.build",
      OTTAVA_NOOP_LATENCY: "compute.build:5",
      OTTAVA_DYNAMODB_FAULTS: "GetItem:drop",
    });
    expect(JSON.stringify(config)).not.toMatch(/compute\.build|GetItem/);
  });

  it("plug in what they name", async () => {
    const injected = readInjected({ OTTAVA_NOOP_FAULTS: "compute.delete:1", OTTAVA_DYNAMODB_FAULTS: "GetItem@finishChange:drop:1" });
    await expect(injected.noopDrivers!.compute.delete("c", "a")).rejects.toThrow("Injected fault: compute.delete (OTTAVA_NOOP_FAULTS)");
    await expect(injected.noopDrivers!.compute.delete("c", "a")).resolves.toBeUndefined();
    const faults = injected.dynamoFaults!;
    expect(faults).toBeInstanceOf(DynamoFaults);
    // The stores' client gets the faults, then what else it is given (a meter).
    const decorated: string[] = [];
    const { store } = await freshTable(
      {},
      storesDecorator(faults, (c) => decorated.push(c.constructor.name)),
    );
    expect(decorated).toEqual(["DynamoDBClient"]);
    // Each task runs with its requests under its name, inside what else the runner is given (a test's decorator).
    const order: string[] = [];
    const decorate = taskDecorator(faults, (call, invoke) => async (input) => (order.push(`before ${call.task}`), invoke(input)));
    const invoke = decorate!({ flow: "f", execution: "e", state: "FinishChange", task: "finishChange" }, async () => {
      order.push("task");
      return (await store.getLoadBalancer("none")) === undefined;
    });
    expect(await store.getLoadBalancer("none")).toBeUndefined();
    expect(await invoke(null)).toBe(true); // its first attempt dropped, the SDK's retry answered
    expect(order).toEqual(["before finishChange", "task"]);
    expect(faults.injected).toEqual([{ op: "GetItem", label: "finishChange", fault: "drop" }]);
    expect([faults.attempts("GetItem"), faults.attempts("GetItem", "finishChange")]).toEqual([3, 2]);
  });

  it("refuse what they do not understand, naming the setting (npm start does not start)", () => {
    expect(() => readInjected({ OTTAVA_NOOP_FAULTS: "compute.fly" })).toThrow("OTTAVA_NOOP_FAULTS: compute has no method 'fly'");
    expect(() => readInjected({ OTTAVA_NOOP_LATENCY: "nope" })).toThrow(
      "OTTAVA_NOOP_LATENCY: 'nope' is not driver.method[:N] (drivers: compute, network, amphora)",
    );
    expect(() => readInjected({ OTTAVA_DYNAMODB_FAULTS: "GetItem:nope" })).toThrow("OTTAVA_DYNAMODB_FAULTS: 'GetItem:nope' names no fault");
  });
});

// The metrics port on Powertools: each data point one Embedded Metric Format line, at once.
import { describe, expect, it } from "vitest";
import { METRICS_NAMESPACE, createMetrics, metrics } from "@ottava/edge";
import { captureMetrics, captureOutput } from "./support/output";

describe("metrics", () => {
  it("count() writes an EMF line at once: namespace Ottava, the metric with unit Count, the service and given dimensions", () => {
    const out = captureMetrics();
    metrics.count("FlowsStarted", 1, { flow: "loadbalancer-create" });
    const [line, ...more] = out.emitted("FlowsStarted");
    expect(more).toEqual([]);
    expect(line!._aws.CloudWatchMetrics).toEqual([
      { Namespace: METRICS_NAMESPACE, Dimensions: [["service", "flow"]], Metrics: [{ Name: "FlowsStarted", Unit: "Count" }] },
    ]);
    expect(line).toMatchObject({ service: "ottava", flow: "loadbalancer-create", FlowsStarted: 1 });
    expect(Math.abs(line!._aws.Timestamp - Date.now())).toBeLessThan(60_000);
  });

  it("timing() is in milliseconds; without dimensions only the service's", () => {
    const out = captureMetrics();
    createMetrics({ service: "ottava-health" }).timing("FlowDuration", 1234.5);
    const [line] = out.emitted("FlowDuration");
    expect(line!._aws.CloudWatchMetrics[0]).toMatchObject({
      Dimensions: [["service"]],
      Metrics: [{ Name: "FlowDuration", Unit: "Milliseconds" }],
    });
    expect(line).toMatchObject({ service: "ottava-health", FlowDuration: 1234.5 });
  });

  it("never fails the caller: an invalid data point is logged and dropped", () => {
    const out = captureMetrics();
    expect(() => metrics.timing("FlowDuration", Number.NaN, { flow: "f" })).not.toThrow();
    expect(() => metrics.count("", 1)).not.toThrow();
    expect(out.emitted("FlowDuration")).toEqual([]);
    expect(out.lines.filter((l) => l.includes('"message":"metric dropped"'))).toHaveLength(2);
  });

  it("writes nothing with POWERTOOLS_METRICS_DISABLED=true (as the suite runs)", () => {
    expect(process.env.POWERTOOLS_METRICS_DISABLED).toBe("true");
    const lines = captureOutput();
    metrics.count("FlowsStarted", 1, { flow: "f" });
    expect(lines).toEqual([]);
  });
});

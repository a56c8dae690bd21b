// The metrics port of @ottava/core (Metrics) on Powertools for AWS Lambda's metrics: one CloudWatch
// Embedded Metric Format (EMF) line on stdout per data point, written at once (a single-metric
// publish, so long-running processes, npm start and the health manager, need no Lambda handler
// wrapper to flush). Namespace `Ottava`, dimension `service` (POWERTOOLS_SERVICE_NAME, default
// `ottava`) plus the ones given. POWERTOOLS_METRICS_DISABLED=true turns them off (so does
// POWERTOOLS_DEV=true, unless POWERTOOLS_METRICS_DISABLED says otherwise); it is read at each data point.
import { MetricUnit, Metrics as PowertoolsMetrics } from "@aws-lambda-powertools/metrics";
import type { Metrics } from "@ottava/core";
import { createLogger } from "./log";

export const METRICS_NAMESPACE = "Ottava";

/** A metrics port on Powertools; a data point never fails its caller (an invalid one is logged and dropped). */
export function createMetrics(options: { namespace?: string; service?: string } = {}): Metrics {
  const root = new PowertoolsMetrics({
    namespace: options.namespace ?? METRICS_NAMESPACE,
    serviceName: options.service ?? (process.env.POWERTOOLS_SERVICE_NAME || "ottava"),
  });
  const emit = (
    name: string,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number,
    dimensions: Record<string, string> = {},
  ) => {
    try {
      if (!Number.isFinite(value)) throw new RangeError(`${value} is not a finite number`);
      // singleMetric(): a fresh instance (the environment read again) that publishes on addMetric.
      const single = root.singleMetric();
      for (const [k, v] of Object.entries(dimensions)) if (v) single.addDimension(k, v);
      single.addMetric(name, unit, value);
    } catch (e) {
      createLogger({ service: "ottava-metrics" }).warn("metric dropped", { metric: name, value, error: String(e) });
    }
  };
  return {
    count: (name, value = 1, dimensions) => emit(name, MetricUnit.Count, value, dimensions),
    timing: (name, ms, dimensions) => emit(name, MetricUnit.Milliseconds, Math.max(0, ms), dimensions),
  };
}

let processMetrics: Metrics | undefined;
const processWide = () => (processMetrics ??= createMetrics());

/**
 * The process's metrics (as Powertools' examples keep theirs: one, at module level), made at the first
 * data point: a process that emits none (the API answering reads) never builds Powertools' Metrics.
 */
export const metrics: Metrics = {
  count: (name, value, dimensions) => processWide().count(name, value, dimensions),
  timing: (name, ms, dimensions) => processWide().timing(name, ms, dimensions),
};

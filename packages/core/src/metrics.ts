// The metrics port: counts and durations, each with its dimensions. Its adapter is at the edge of each
// process (@ottava/edge's createMetrics and process-wide `metrics`: CloudWatch Embedded Metric Format
// lines, written by Powertools for AWS Lambda's metrics).
export interface Metrics {
  /** Adds `value` (default 1) to the count `name`. */
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
  /** One duration of `name`, in milliseconds. */
  timing(name: string, ms: number, dimensions?: Record<string, string>): void;
}

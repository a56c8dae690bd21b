// The logging port: structured lines, a message and its fields, at four levels. Its adapter is at the
// edge of each process (@ottava/edge's createLogger: Powertools for AWS Lambda's logger, one JSON
// object a line). Never pass secrets to it.
export type Level = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line (a request id, a flow execution, a load balancer). */
  child(fields: Record<string, unknown>): Logger;
}

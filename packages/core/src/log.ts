// Structured JSON logs, one object a line, in the shape Powertools' logger writes.
// Never pass secrets here: fields named like credentials are masked as a last line of defence.

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET = /pass(word)?|secret|token|authorization|credential|key$/i;

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  base: Record<string, unknown> = {},
  level: Level = (process.env.OTTAVA_LOG_LEVEL as Level) || "info",
  write: (line: string) => void = (line) => process.stdout.write(line + "\n"),
): Logger {
  const emit = (lvl: Level, message: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < (ORDER[level] ?? 20)) return;
    const entry: Record<string, unknown> = { level: lvl.toUpperCase(), message, timestamp: new Date().toISOString(), ...base };
    for (const [k, v] of Object.entries(fields ?? {})) entry[k] = SECRET.test(k) ? "***" : v;
    write(JSON.stringify(entry));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...base, ...fields }, level, write),
  };
}

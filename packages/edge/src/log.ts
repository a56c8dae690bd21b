// The logging port of @ottava/core (Logger) on Powertools for AWS Lambda's logger: structured JSON
// logs, one object a line: `level` (upper case), `message`, `timestamp`, `service`, `sampling_rate`,
// then the logger's keys and the line's fields at top level (and, in a Lambda, its X-Ray trace id).
// DEBUG and INFO lines go to stdout, WARN and ERROR lines to stderr (Powertools' own Console on the
// process's streams; in Lambda and in a container both end up in the same log). POWERTOOLS_DEV=true
// pretty-prints them. Never pass secrets here: keys named like credentials are masked, at any depth,
// as a last line of defence.
import { Logger as PowertoolsLogger } from "@aws-lambda-powertools/logger";
import type { Level, Logger } from "@ottava/core";

const SECRET = /pass(word)?|secret|token|authorization|credential|key$/i;
const LEVELS: Record<Level, "DEBUG" | "INFO" | "WARN" | "ERROR"> = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" };

/** The JSON replacer Powertools applies to every key of a line: the value of a key named like a credential is masked. */
function maskSecrets(key: string, value: unknown): unknown {
  return key !== "" && SECRET.test(key) ? "***" : value;
}

/**
 * A logger for `base.service` (Powertools' serviceName) with the rest of `base` on every line, at
 * `level` (OTTAVA_LOG_LEVEL; in a Lambda, Advanced Logging Controls' AWS_LAMBDA_LOG_LEVEL wins).
 */
export function createLogger(base: Record<string, unknown> = {}, level: Level = (process.env.OTTAVA_LOG_LEVEL as Level) || "info"): Logger {
  const { service, ...keys } = base;
  return wrap(
    new PowertoolsLogger({
      serviceName: typeof service === "string" ? service : undefined,
      logLevel: LEVELS[level] ?? "INFO",
      persistentKeys: keys,
      jsonReplacerFn: maskSecrets,
    }),
  );
}

/**
 * A child's fields go on each of its lines at top level, as persistent keys would: a child costs
 * nothing until it writes (every request has one; Powertools' createChild builds a whole logger).
 */
function wrap(logger: PowertoolsLogger, keys: Record<string, unknown> = {}): Logger {
  const line = (fields?: Record<string, unknown>) => ({ ...keys, ...fields });
  return {
    debug: (message, fields) => logger.debug(message, line(fields)),
    info: (message, fields) => logger.info(message, line(fields)),
    warn: (message, fields) => logger.warn(message, line(fields)),
    error: (message, fields) => logger.error(message, line(fields)),
    child: (fields) => wrap(logger, { ...keys, ...fields }),
  };
}

// The settings that are secrets, and how a process on AWS reads them. Locally (`npm start`) each is its
// plain setting, OTTAVA_<NAME>, as any other. On AWS no secret is ever in a function's environment: the
// stacks put each in an SSM Parameter Store SecureString and give a function OTTAVA_<NAME>_PARAMETER (the
// parameter's name, with its version: `/ottava/prod/CaPrivateKey:3`) only if the function needs it; the
// function reads it once, when it first needs its settings (`configLoader`), and keeps it for its life.
// A changed secret is a new parameter version, so a new function configuration: every warm function is
// replaced, none keeps the old value.
//
// Reading one is a port (SecretReader): the Lambda entries give configLoader @ottava/edge's ssmSecretReader;
// a process that reads no parameter (npm start, the API under noauth) never calls it.
import { SECRET_SETTINGS, loadConfig, parameterSetting, type Config } from "./config";

/** Reads one secret: the decrypted value of an SSM parameter (`name` or `name:version`). */
export type SecretReader = (parameter: string) => Promise<string>;

type Env = Record<string, string | undefined>;
const set = (v: string | undefined): v is string => v !== undefined && v !== "";

/**
 * The environment with every secret that has an OTTAVA_<NAME>_PARAMETER read into OTTAVA_<NAME>, each
 * parameter read once, all at the same time. A secret set both ways is refused (which one was meant?).
 * Errors name the setting and the parameter, never a value.
 */
export async function readSecretSettings(env: Env, read: SecretReader): Promise<Env> {
  const wanted = SECRET_SETTINGS.filter((name) => set(env[parameterSetting(name)]));
  if (wanted.length === 0) return env;
  const both = wanted.filter((name) => set(env[`OTTAVA_${name}`]));
  if (both.length)
    throw new Error(`set either OTTAVA_<NAME> or OTTAVA_<NAME>_PARAMETER, not both: ${both.map((n) => `OTTAVA_${n}`).join(", ")}`);
  const values = await Promise.all(
    wanted.map(async (name) => {
      const parameter = env[parameterSetting(name)]!;
      let value: string;
      try {
        value = await read(parameter);
      } catch (e) {
        throw new Error(
          `${parameterSetting(name)}: the parameter ${parameter} could not be read (${(e as Error)?.name ?? "Error"}: ${(e as Error)?.message ?? String(e)})`,
          { cause: e },
        );
      }
      if (value === "") throw new Error(`${parameterSetting(name)}: the parameter ${parameter} is empty`);
      return [`OTTAVA_${name}`, value] as const;
    }),
  );
  return { ...env, ...Object.fromEntries(values) };
}

/**
 * The process's settings, its secrets read first (readSecretSettings), made once: every call answers
 * the same settings. A failure (SSM unreachable, a parameter missing) is not kept: the next call tries
 * again, so a Lambda whose first invocation failed does not fail every later one.
 */
export function configLoader(env: Env, read: SecretReader): () => Promise<Config> {
  let loading: Promise<Config> | undefined;
  return () => {
    loading ??= readSecretSettings(env, read)
      .then((resolved) => loadConfig(resolved))
      .catch((e: unknown) => {
        loading = undefined;
        throw e;
      });
    return loading;
  };
}

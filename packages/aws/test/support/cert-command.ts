// `npm run cert` as an operator runs it against the file's moto: a child process, its settings and AWS
// credentials in its environment (OTTAVA_CERT_MANAGER=secretsmanager, the endpoint, the stage).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { MOTO_CLIENT, type Moto } from "./moto";

const ROOT = join(import.meta.dirname, "../../../..");

/** Runs `npm run cert -- <args>` for `stage` against moto: its exit status, output and error (trimmed). */
export function runCertCommand(moto: Pick<Moto, "endpoint">, stage: string, ...args: string[]) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    OTTAVA_CERT_MANAGER: "secretsmanager",
    OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
    OTTAVA_STAGE: stage,
    AWS_REGION: MOTO_CLIENT.region,
    AWS_ACCESS_KEY_ID: MOTO_CLIENT.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: MOTO_CLIENT.credentials.secretAccessKey,
  };
  for (const k of ["AWS_PROFILE", "AWS_SESSION_TOKEN", "OTTAVA_CERT_STORAGE_PATH"]) delete env[k];
  const run = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "packages/local/src/cert.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr.trim() };
}

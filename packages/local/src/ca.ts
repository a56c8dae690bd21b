// npm start's own CA, when the settings name none (OTTAVA_CA_CERTIFICATE, OTTAVA_CA_PRIVATE_KEY): made
// once and kept in <dataDir>/ca/ (ca.pem, and ca.key readable by its owner only), so amphora
// certificates issued before a restart still verify after it; with --in-memory, kept in memory only.
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CaMaterial } from "@ottava/core";

const CERT_FILE = "ca.pem";
const KEY_FILE = "ca.key";

function read(caDir: string): CaMaterial | undefined {
  try {
    return { certificate: readFileSync(join(caDir, CERT_FILE), "utf8"), privateKey: readFileSync(join(caDir, KEY_FILE), "utf8") };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/**
 * The local CA kept in `<dataDir>/ca/`, created there on first use; without `dataDir`, a new CA held
 * in memory only. The directory appears whole or not at all (written aside, then renamed), so two
 * starts at once, or one stopped half-way, never leave a certificate without its key.
 */
export async function loadOrCreateLocalCa(dataDir?: string): Promise<CaMaterial> {
  // Loaded here, not at the top: the runtime loads the controller while DynamoDB Local boots.
  const { createLocalCa } = await import("@ottava/controller");
  if (dataDir === undefined) return createLocalCa();
  const caDir = join(dataDir, "ca");
  const existing = read(caDir);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  const ca = await createLocalCa();
  const staging = mkdtempSync(join(dataDir, ".ca-"));
  try {
    writeFileSync(join(staging, KEY_FILE), ca.privateKey, { mode: 0o600 });
    writeFileSync(join(staging, CERT_FILE), ca.certificate, { mode: 0o644 });
    try {
      renameSync(staging, caDir);
      return ca;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "EEXIST" && code !== "ENOTEMPTY") throw e;
      // Another start made it first: use that one.
      const theirs = read(caDir);
      if (!theirs) throw e;
      return theirs;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

// npm start's local CA: made once in <dataDir>/ca/, the same after a restart, its key private to its owner.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { X509Certificate } from "node:crypto";
import { describe, expect, it, onTestFinished } from "vitest";
import { LocalCertGenerator } from "@ottava/controller";
import { loadOrCreateLocalCa } from "../src/ca";

describe("loadOrCreateLocalCa", () => {
  it("creates a CA once in <dataDir>/ca/ and loads the same one afterwards", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ottava-ca-"));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const [a, b] = await Promise.all([loadOrCreateLocalCa(dataDir), loadOrCreateLocalCa(dataDir)]);
    expect(b).toEqual(a);
    expect(await loadOrCreateLocalCa(dataDir)).toEqual(a);
    expect(readdirSync(dataDir)).toEqual(["ca"]);
    expect(readdirSync(join(dataDir, "ca")).sort()).toEqual(["ca.key", "ca.pem"]);
    expect(statSync(join(dataDir, "ca", "ca.key")).mode & 0o077).toBe(0);
    const cert = new X509Certificate(a.certificate);
    expect(cert.ca).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    // It signs amphora certificates.
    const server = await new LocalCertGenerator(() => a).generateServerPem("amphora-1", 3600);
    expect(new X509Certificate(server.pem).verify(cert.publicKey)).toBe(true);
  });

  it("keeps nothing without a data directory (--in-memory): a new CA each time", async () => {
    const [a, b] = await Promise.all([loadOrCreateLocalCa(), loadOrCreateLocalCa()]);
    expect(a.certificate).not.toBe(b.certificate);
  });
});

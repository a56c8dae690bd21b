// The amphora's user data: checked by Debian's cloud-init 22.4 itself (`cloud-init schema`), read back
// by PyYAML as cloud-init reads it (each file's text, the gzip+base64 ones decoded), on both paths (an
// image found by its tag; the first boot of the base image); and the embedded image scripts against
// packages/aws/image/.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { IMAGE_FILES } from "../src/compute/image-files";
import { USER_DATA_LIMIT, renderUserData, userDataSize, type UserDataInput } from "../src";
// @ts-expect-error: a plain .mjs script, without types
import { MODULE_PATH, imageFilesModule } from "../scripts/embed-image.mjs";
import { TEST_CONTROLLER_CA, TEST_IMAGE_FILES } from "./support/secrets";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "ottava-user-data-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const input = (over: Partial<UserDataInput> = {}): UserDataInput => ({
  region: "eu-west-3",
  secretId: "ottava/prod/amphora/0b6f1d3e-5a0c-4a39-9a45-3c1f0e6f4b1a",
  secretsmanagerEndpoint: null,
  clientCa: TEST_CONTROLLER_CA,
  firstBoot: false,
  ...over,
});

let n = 0;
/** `cloud-init schema --config-file` on the user data: its exit status and what it printed. */
async function schema(userData: string): Promise<{ code: number; out: string }> {
  const file = join(dir, `user-data-${n++}`);
  writeFileSync(file, userData);
  try {
    const { stdout, stderr } = await run("cloud-init", ["schema", "--config-file", file]);
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, out: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

interface Read {
  files: { path: string; permissions: string; text: string }[];
  runcmd: string[][];
}
/** The user data as cloud-init reads it (PyYAML, Debian's python3), each file's text decoded as write_files decodes it. */
async function readBack(userData: string): Promise<Read> {
  const file = join(dir, `user-data-${n++}`);
  writeFileSync(file, userData);
  const py = `
import base64, gzip, json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
def text(f):
    c = f["content"]
    return gzip.decompress(base64.b64decode(c)).decode() if f.get("encoding") == "gz+b64" else c
print(json.dumps({"files": [{"path": f["path"], "permissions": f["permissions"], "text": text(f)} for f in doc["write_files"]], "runcmd": doc["runcmd"]}))
`;
  const { stdout } = await run("/usr/bin/python3", ["-c", py, file]);
  return JSON.parse(stdout) as Read;
}

describe("renderUserData", () => {
  it("booting a tagged image: valid cloud-config with the CA, where the secret is, and the configure step", async () => {
    const userData = renderUserData(input({ secretsmanagerEndpoint: "https://vpce-0abc.secretsmanager.eu-west-3.vpce.amazonaws.com" }));
    expect(userData.startsWith("#cloud-config\n")).toBe(true);
    expect(await schema(userData)).toEqual({ code: 0, out: expect.stringContaining("Valid cloud-config") });
    const read = await readBack(userData);
    expect(read.files).toEqual([
      { path: "/etc/octavia/certs/client_ca.pem", permissions: "0644", text: TEST_CONTROLLER_CA },
      { path: "/etc/ottava/amphora.json", permissions: "0644", text: expect.any(String) },
    ]);
    expect(JSON.parse(read.files[1]!.text)).toEqual({
      region: "eu-west-3",
      secret_id: "ottava/prod/amphora/0b6f1d3e-5a0c-4a39-9a45-3c1f0e6f4b1a",
      secretsmanager_endpoint: "https://vpce-0abc.secretsmanager.eu-west-3.vpce.amazonaws.com",
    });
    expect(read.runcmd).toEqual([["/usr/local/sbin/ottava-amphora-configure", "/etc/ottava/amphora.json"]]);
    // No endpoint set: null, the Region's.
    const regional = await readBack(renderUserData(input()));
    expect(JSON.parse(regional.files[1]!.text).secretsmanager_endpoint).toBeNull();
  });

  it("first boot: also the image scripts, gzip+base64 under /var/lib/ottava/image/, and install.sh run before the configure step", async () => {
    const userData = renderUserData(input({ firstBoot: true, imageFiles: TEST_IMAGE_FILES }));
    expect(await schema(userData)).toEqual({ code: 0, out: expect.stringContaining("Valid cloud-config") });
    const read = await readBack(userData);
    expect(read.files.slice(2)).toEqual(
      TEST_IMAGE_FILES.map((f) => ({
        path: `/var/lib/ottava/image/${f.name}`,
        permissions: f.executable ? "0755" : "0644",
        text: f.content,
      })),
    );
    expect(read.runcmd).toEqual([
      ["sh", "/var/lib/ottava/image/install.sh"],
      ["/usr/local/sbin/ottava-amphora-configure", "/etc/ottava/amphora.json"],
    ]);
    expect(() => renderUserData(input({ firstBoot: true, imageFiles: TEST_IMAGE_FILES.slice(1) }))).toThrow(/no install\.sh/);
  });

  it("keeps any text as it is: a CA without its last line break, text a block literal would change", async () => {
    const odd = "  leading blanks\n\ttab\r\nand two breaks\n\n";
    const read = await readBack(
      renderUserData(input({ clientCa: odd, firstBoot: true, imageFiles: [{ ...TEST_IMAGE_FILES[0]!, content: odd }] })),
    );
    expect(read.files[0]!.text).toBe(odd);
    expect(read.files[2]!.text).toBe(odd);
    expect(
      (await readBack(renderUserData(input({ clientCa: "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----" })))).files[0]!.text,
    ).toBe("-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n");
  });

  it("is refused by cloud-init's schema when it is not cloud-config (the check can fail)", async () => {
    const broken = renderUserData(input()).replace("    permissions:", "    mode:");
    const out = await schema(broken);
    expect(out.code).not.toBe(0);
    expect(out.out).toMatch(/'mode' was unexpected/);
  });

  it("with packages/aws/image/'s scripts as embedded: within AWS's 16 KiB, or refused when install.sh is not there", async () => {
    if (IMAGE_FILES.some((f) => f.name === "install.sh")) {
      const userData = renderUserData(input({ firstBoot: true }));
      expect(userDataSize(userData)).toBeLessThanOrEqual(USER_DATA_LIMIT);
      expect((await schema(userData)).code).toBe(0);
      expect((await readBack(userData)).files.slice(2).map((f) => f.text)).toEqual(IMAGE_FILES.map((f) => f.content));
    } else {
      expect(() => renderUserData(input({ firstBoot: true }))).toThrow(/no install\.sh/);
    }
  });

  it("is measured as AWS counts it: the raw text's bytes, before base64", () => {
    expect(userDataSize("#cloud-config\né\n")).toBe(17);
    expect(USER_DATA_LIMIT).toBe(16384);
  });
});

describe("the embedded image scripts (src/compute/image-files.ts)", () => {
  it("are packages/aws/image/'s files as they are: run `node packages/aws/scripts/embed-image.mjs` after changing them", async () => {
    expect(readFileSync(MODULE_PATH, "utf8")).toBe(await imageFilesModule());
  });
});

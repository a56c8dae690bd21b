// An amphora's user data (cloud-config), as Octavia's user_data_jinja_cfg renders its config drive files,
// but with no secret in it (the boot contract of docs/data-plane.md): the controller CA's certificate,
// where the amphora's secret is, and on the first-boot path the image scripts of packages/aws/image/ with
// the command that runs them. The amphora fetches its secrets itself (ottava-amphora-configure).
import { gzipSync } from "node:zlib";
import { IMAGE_FILES } from "./image-files";

/** A file of packages/aws/image/, embedded (image-files.ts, written by packages/aws/scripts/embed-image.mjs). */
export interface ImageFile {
  /** Its name in packages/aws/image/ (and in /var/lib/ottava/image/ on the amphora). */
  name: string;
  /** Its mode there has an execute bit. */
  executable: boolean;
  content: string;
}

/** AWS's limit on user data: 16 KiB, counted on the raw text, before its base64 encoding. */
export const USER_DATA_LIMIT = 16 * 1024;

/** Where the first-boot path puts the image scripts on the amphora. */
export const IMAGE_DIR = "/var/lib/ottava/image";
/** The amphora's boot settings: where its secret is (ottava-amphora-configure reads them). */
export const AMPHORA_SETTINGS_PATH = "/etc/ottava/amphora.json";
/** The controller CA's certificate: the agent checks the controller's client certificate against it ([amphora_agent] agent_server_ca). */
export const CLIENT_CA_PATH = "/etc/octavia/certs/client_ca.pem";
/** The configure step, installed by install.sh (or baked into the image). */
export const CONFIGURE_COMMAND = "/usr/local/sbin/ottava-amphora-configure";

export interface UserDataInput {
  /** The amphora's Region. */
  region: string;
  /** Its secret's name (amphoraSecretName). */
  secretId: string;
  /** OTTAVA_SECRETSMANAGER_ENDPOINT; null: the Region's. */
  secretsmanagerEndpoint: string | null;
  /** The controller CA's certificate, PEM (public). */
  clientCa: string;
  /**
   * The first-boot path (no image tag: the stock Debian 12 AMI of OTTAVA_AMP_BASE_IMAGE_ID): the image
   * scripts travel in the user data and install.sh runs before the configure step.
   */
  firstBoot: boolean;
  /** The image scripts the first-boot path embeds (default: packages/aws/image/'s, as embedded). */
  imageFiles?: readonly ImageFile[];
}

/**
 * A YAML scalar: a block literal for text of plain lines (a PEM), else a JSON string (YAML reads it as
 * the same text): one line, or text a block literal would not keep as it is (leading blanks, tabs,
 * carriage returns, trailing empty lines).
 */
function scalar(value: string, indent: string): string {
  if (!value.includes("\n") || /^[ \t]|[\t\r]|\n\n$/.test(value)) return JSON.stringify(value);
  const body = value.endsWith("\n") ? value.slice(0, -1) : value;
  // "|" keeps one final line break, "|-" none; the text's own indentation is kept after the block's.
  return `${value.endsWith("\n") ? "|" : "|-"}\n${body
    .split("\n")
    .map((line) => (line ? indent + line : ""))
    .join("\n")}`;
}

interface WriteFile {
  path: string;
  permissions: string;
  content: string;
  encoding?: "gz+b64";
}

/**
 * The amphora's cloud-config. It holds nothing secret: anyone who may describe the instance may read it.
 * Throws when the first-boot path has no install.sh to run.
 */
export function renderUserData(input: UserDataInput): string {
  const files: WriteFile[] = [
    { path: CLIENT_CA_PATH, permissions: "0644", content: input.clientCa.endsWith("\n") ? input.clientCa : `${input.clientCa}\n` },
    {
      path: AMPHORA_SETTINGS_PATH,
      permissions: "0644",
      content: `${JSON.stringify({ region: input.region, secret_id: input.secretId, secretsmanager_endpoint: input.secretsmanagerEndpoint })}\n`,
    },
  ];
  const runcmd: string[][] = [];
  if (input.firstBoot) {
    const image = input.imageFiles ?? IMAGE_FILES;
    if (!image.some((f) => f.name === "install.sh"))
      throw new Error(
        "the first-boot path has no install.sh to run: packages/aws/image/ was not embedded (packages/aws/scripts/embed-image.mjs)",
      );
    for (const f of image)
      files.push({
        path: `${IMAGE_DIR}/${f.name}`,
        permissions: f.executable ? "0755" : "0644",
        encoding: "gz+b64",
        content: gzipSync(f.content, { level: 9 }).toString("base64"),
      });
    runcmd.push(["sh", `${IMAGE_DIR}/install.sh`]);
  }
  runcmd.push([CONFIGURE_COMMAND, AMPHORA_SETTINGS_PATH]);
  const lines = ["#cloud-config", "write_files:"];
  for (const f of files) {
    lines.push(`  - path: ${JSON.stringify(f.path)}`, `    permissions: ${JSON.stringify(f.permissions)}`);
    if (f.encoding) lines.push(`    encoding: ${f.encoding}`);
    lines.push(`    content: ${scalar(f.content, "      ")}`);
  }
  lines.push("runcmd:", ...runcmd.map((argv) => `  - [${argv.map((a) => JSON.stringify(a)).join(", ")}]`));
  return `${lines.join("\n")}\n`;
}

/** The size AWS limits (USER_DATA_LIMIT): the raw user data's bytes, before base64. */
export const userDataSize = (userData: string) => Buffer.byteLength(userData, "utf8");

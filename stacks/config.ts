// What a deploy is, decided from the deployer's environment before anything is created: which
// authentication the API takes, how it is reached, the amphora network, where alarms go, and which SST
// secrets must be set. Pure (no SST globals), so test/stacks-config.test.ts runs it; every problem found
// stops the deploy with one message that says what to set.
import { statSync } from "node:fs";
import { relative, resolve } from "node:path";
import type { SecretSetting } from "@ottava/core/config";

type Env = Record<string, string | undefined>;

/** The address range of the VPC (sst.aws.Vpc always makes 10.0.0.0/16). */
export const VPC_CIDR = "10.0.0.0/16";
/**
 * With OTTAVA_COMPUTE_DRIVER=ec2, the amphorae's management subnets: the upper half of the VPC, one /20 per
 * zone of the VPC (stacks/network.ts). sst.aws.Vpc's own subnets take 10.0.<8i>.0/22 and 10.0.<8i+4>.0/22
 * for zone i, the lower half for up to 16 zones.
 */
export const AMPHORA_SUBNETS_CIDR = "10.0.128.0/17";
/** The ec2 compute driver's settings, which mean nothing to another compute driver. */
const EC2_SETTINGS = [
  "OTTAVA_AMP_IMAGE_TAG",
  "OTTAVA_AMP_BASE_IMAGE_ID",
  "OTTAVA_AMP_FLAVOR_ID",
  "OTTAVA_AMP_BOOT_NETWORK_LIST",
  "OTTAVA_AMP_SECGROUP_LIST",
] as const;
/**
 * The settings the stacks set with ec2, from what they make: the management subnets and the amphorae's
 * security group, the instance profile (stacks/network.ts, stacks/compute.ts), and the heartbeat load
 * balancer's addresses (stacks/health.ts).
 */
const EC2_SET_BY_STACKS = [
  "OTTAVA_AMP_BOOT_NETWORK_LIST",
  "OTTAVA_AMP_SECGROUP_LIST",
  "OTTAVA_AMP_INSTANCE_PROFILE",
  "OTTAVA_CONTROLLER_IP_PORT_LIST",
] as const;

/**
 * The secrets, each an SST secret (`npx sst secret set <Name> ...`), kept by the stacks in an SSM
 * SecureString and read at run time only by the functions that need it (OTTAVA_<SETTING>_PARAMETER),
 * never put in an environment.
 */
export const STORED_SECRETS = {
  KeystonePassword: "KEYSTONE_PASSWORD",
  HeartbeatKey: "HEARTBEAT_KEY",
  CaPrivateKey: "CA_PRIVATE_KEY",
  CaPrivateKeyPassphrase: "CA_PRIVATE_KEY_PASSPHRASE",
  ClientCert: "CLIENT_CERT",
} as const satisfies Record<string, SecretSetting>;
export type StoredSecret = keyof typeof STORED_SECRETS;

/** SST secrets that hold nothing secret (a URL, names, a certificate): plain settings of the functions that use them. */
export const PLAIN_SECRETS = {
  KeystoneUrl: "KEYSTONE_URL",
  KeystoneUsername: "KEYSTONE_USERNAME",
  KeystoneProjectName: "KEYSTONE_PROJECT_NAME",
  CaCertificate: "CA_CERTIFICATE",
} as const;
export type PlainSecret = keyof typeof PLAIN_SECRETS;
export type SecretName = StoredSecret | PlainSecret;

/** What each secret is, for the message that asks for it. */
const WHAT: Record<SecretName, string> = {
  KeystoneUrl: "the Keystone v3 endpoint tokens are validated at, e.g. https://keystone.example.com/v3",
  KeystoneUsername: "the service user Ottava validates tokens as",
  KeystonePassword: "that user's password",
  KeystoneProjectName: "that user's project, e.g. service",
  HeartbeatKey: "the HMAC key amphora heartbeats are signed with (Octavia's [health_manager] heartbeat_key)",
  CaCertificate: "the CA certificate that signs amphora certificates (PEM)",
  CaPrivateKey: "that CA's private key (PEM)",
  CaPrivateKeyPassphrase: "the CA key's passphrase, if it is encrypted",
  ClientCert: "Ottava's client certificate and its key for the amphora agents (PEM, both in one value)",
};

/** The name of the opt-in that lets a stage run without authentication: its value must be that stage's name. */
export const NOAUTH_OPT_IN = "OTTAVA_INSECURE_NOAUTH_STAGE";

export interface DeployPlan {
  stage: string;
  production: boolean;
  /** On AWS the default is keystone, as Octavia's; noauth only with the opt-in, on a stage that is not production. */
  authStrategy: "keystone" | "noauth";
  /** noauth: the API's route takes AWS_IAM authorization (signed requests from principals of the account), never anonymous callers. */
  apiIamAuth: boolean;
  /** [controller_worker] amphora_driver on AWS: noop, or rest (the agents on the management network). */
  amphoraDriver: "noop" | "rest";
  /** [controller_worker] compute_driver on AWS: noop, or ec2 (each amphora an EC2 instance, packages/aws). */
  computeDriver: "noop" | "ec2";
  /** [controller_worker] network_driver on AWS: noop, or vpc (VIPs as secondary addresses of ENIs in the user's VPC). */
  networkDriver: "noop" | "vpc";
  heartbeatPort: number;
  amphoraAgentPort: number;
  /**
   * ec2: the amphorae run in this account, in management subnets the stacks make in the VPC
   * (AMPHORA_SUBNETS_CIDR); firstBoot when no image tag is set (the stock image installs its packages at
   * boot, through a NAT gateway). Otherwise undefined: the amphorae, if any, live on an external
   * management network (OTTAVA_AMPHORA_MGMT_CIDR).
   */
  inAccount: { firstBoot: boolean } | undefined;
  /** The amphora management network: heartbeats come from it, the REST driver calls into it (ec2: AMPHORA_SUBNETS_CIDR). */
  mgmtCidr: string;
  /** rest: the route from the VPC's private subnets to the management network, through OTTAVA_AMPHORA_MGMT_GATEWAY. */
  mgmtRoute: { cidrBlock: string; transitGatewayId?: string; gatewayId?: string; vpcPeeringConnectionId?: string } | undefined;
  /** [certificates] cert_manager on AWS: noop, or secretsmanager (Secrets Manager, in Barbican's place). */
  certManager: "noop" | "secretsmanager";
  /** secretsmanager: customer-managed KMS keys certificate secrets may be encrypted with (OTTAVA_CERT_KMS_KEY_ARNS); the readers may decrypt with them through Secrets Manager. */
  certKmsKeyArns: string[];
  /** The operator's policy file (OTTAVA_POLICY_FILE, absolute or relative to the app's root), as a path relative to that root (SST's copyFiles reads it so): the API's bundle carries it. */
  policyFile: string | undefined;
  /** An SNS topic the alarms notify (OTTAVA_ALARM_TOPIC); undefined: the stacks make one. */
  alarmTopic: string | undefined;
  /** Every SST secret this deploy reads. */
  secrets: SecretName[];
  /** Those of them kept in SSM SecureStrings. */
  stored: StoredSecret[];
}

export class DeployConfigError extends Error {
  override name = "DeployConfigError";
}

const setting = (env: Env, name: string) => {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? undefined : v;
};

/** An IPv4 CIDR in its canonical form (host bits clear), prefix 8 to 32; or why it is not one. */
export function parseIpv4Cidr(raw: string): { base: number; prefix: number } | string {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(raw);
  if (!m) return "not an IPv4 CIDR such as 172.16.0.0/12";
  const octets = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return "not an IPv4 CIDR such as 172.16.0.0/12";
  if (prefix < 8) return "wider than a /8: that would admit most of the internet";
  const ip = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  const base = (ip & mask) >>> 0;
  if (base !== ip) return `not a network address: write ${[24, 16, 8, 0].map((s) => (base >>> s) & 255).join(".")}/${prefix}`;
  return { base, prefix };
}

/** Is CIDR a inside CIDR b? */
function within(a: { base: number; prefix: number }, b: { base: number; prefix: number }): boolean {
  if (a.prefix < b.prefix) return false;
  const mask = b.prefix === 0 ? 0 : (~0 << (32 - b.prefix)) >>> 0;
  return (a.base & mask) >>> 0 === b.base;
}

const port = (env: Env, name: string, fallback: number, problems: string[]) => {
  const raw = setting(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) problems.push(`${name} must be a port from 1 to 65535, not '${raw}'`);
  return n;
};

/**
 * The deploy of `stage` from the deployer's environment `env` (process.env, where `sst deploy` runs;
 * SST gives each secret set for the stage to that process as SST_SECRET_<Name>, which is where
 * sst.Secret itself reads it). Throws a DeployConfigError listing every problem.
 */
export function deployPlan(env: Env, stage: string, production: boolean, root: string = process.cwd()): DeployPlan {
  const problems: string[] = [];

  // Authentication: keystone unless noauth is asked for, and noauth only where the opt-in names this stage.
  const rawAuth = setting(env, "OTTAVA_AUTH_STRATEGY") ?? "keystone";
  let authStrategy: DeployPlan["authStrategy"] = "keystone";
  if (rawAuth === "noauth") {
    authStrategy = "noauth";
    if (production) {
      problems.push(`OTTAVA_AUTH_STRATEGY=noauth: stage "${stage}" is a production stage, which always authenticates with Keystone`);
    } else if (setting(env, NOAUTH_OPT_IN) !== stage) {
      problems.push(
        `OTTAVA_AUTH_STRATEGY=noauth makes every caller an admin. On AWS it needs ${NOAUTH_OPT_IN}=${stage} as well (the name of the stage: a private test stage), ` +
          "and then the API answers only requests signed with AWS credentials of this account (AWS_IAM on its route). Otherwise deploy with keystone, the default",
      );
    }
  } else if (rawAuth !== "keystone") {
    problems.push(`OTTAVA_AUTH_STRATEGY must be keystone or noauth, not '${rawAuth}'`);
  }

  const rawDriver = setting(env, "OTTAVA_AMPHORA_DRIVER") ?? "noop";
  const amphoraDriver = rawDriver === "rest" ? "rest" : "noop";
  if (rawDriver !== "noop" && rawDriver !== "rest")
    problems.push(`OTTAVA_AMPHORA_DRIVER on AWS must be noop or rest, not '${rawDriver}' (local runs only under npm start)`);

  const rawCompute = setting(env, "OTTAVA_COMPUTE_DRIVER") ?? "noop";
  const computeDriver = rawCompute === "ec2" ? "ec2" : "noop";
  if (rawCompute !== "noop" && rawCompute !== "ec2")
    problems.push(`OTTAVA_COMPUTE_DRIVER on AWS must be noop or ec2, not '${rawCompute}' (local runs only under npm start)`);
  const rawNetwork = setting(env, "OTTAVA_NETWORK_DRIVER") ?? "noop";
  const networkDriver = rawNetwork === "vpc" ? "vpc" : "noop";
  if (rawNetwork !== "noop" && rawNetwork !== "vpc")
    problems.push(`OTTAVA_NETWORK_DRIVER on AWS must be noop or vpc, not '${rawNetwork}' (local runs only under npm start)`);

  // The data plane on AWS is all or nothing: an EC2 amphora is of use only configured by the REST driver
  // (the noop one never tells its agent anything), and its VIP only as an ENI of the vpc network driver
  // (the noop network's made-up ports are no interface the agent could find); the vpc driver plugs its
  // ENIs into EC2 instances, which only the ec2 compute driver boots.
  if (computeDriver === "ec2" && amphoraDriver !== "rest")
    problems.push(
      "OTTAVA_COMPUTE_DRIVER=ec2 needs OTTAVA_AMPHORA_DRIVER=rest: the noop amphora driver never configures the instances it would pay for",
    );
  if (computeDriver === "ec2" && networkDriver !== "vpc")
    problems.push(
      "OTTAVA_COMPUTE_DRIVER=ec2 needs OTTAVA_NETWORK_DRIVER=vpc: the amphorae's VIPs are ENIs in the VPC, which only the vpc driver plugs",
    );
  if (networkDriver === "vpc" && computeDriver !== "ec2")
    problems.push("OTTAVA_NETWORK_DRIVER=vpc needs OTTAVA_COMPUTE_DRIVER=ec2: it plugs the VIPs' ENIs into the amphorae's EC2 instances");

  const heartbeatPort = port(env, "OTTAVA_HEARTBEAT_PORT", 5555, problems);
  const amphoraAgentPort = port(env, "OTTAVA_AMPHORA_AGENT_PORT", 9443, problems);
  const vpc = parseIpv4Cidr(VPC_CIDR) as { base: number; prefix: number };

  let inAccount: DeployPlan["inAccount"];
  let mgmtCidr = setting(env, "OTTAVA_AMPHORA_MGMT_CIDR") ?? "";
  let mgmtRoute: DeployPlan["mgmtRoute"];
  const gateway = setting(env, "OTTAVA_AMPHORA_MGMT_GATEWAY");
  if (computeDriver === "ec2") {
    // The amphorae in this account: their management subnets are the stacks' own, in the VPC.
    for (const name of ["OTTAVA_AMPHORA_MGMT_CIDR", "OTTAVA_AMPHORA_MGMT_GATEWAY"])
      if (setting(env, name) !== undefined)
        problems.push(
          `${name} is for amphorae on an external management network: with OTTAVA_COMPUTE_DRIVER=ec2 the amphorae boot in the management subnets the stacks make in the VPC (${AMPHORA_SUBNETS_CIDR}); unset it`,
        );
    for (const name of EC2_SET_BY_STACKS)
      if (setting(env, name) !== undefined)
        problems.push(
          `${name} is set by the stacks with OTTAVA_COMPUTE_DRIVER=ec2 (the management subnets, the amphorae's security group and instance profile, the heartbeat load balancer's addresses: what they make); unset it`,
        );
    const imageTag = setting(env, "OTTAVA_AMP_IMAGE_TAG");
    const baseImage = setting(env, "OTTAVA_AMP_BASE_IMAGE_ID");
    if (imageTag === undefined && baseImage === undefined)
      problems.push(
        'OTTAVA_COMPUTE_DRIVER=ec2 needs an image: OTTAVA_AMP_IMAGE_TAG, the tag of the baked amphora image (docs/deploying.md, "The amphora image"), ' +
          "or OTTAVA_AMP_BASE_IMAGE_ID, the stock Debian 12 AMI that installs itself at first boot (ami-…)",
      );
    if (imageTag !== undefined && baseImage !== undefined)
      problems.push("OTTAVA_AMP_BASE_IMAGE_ID is never booted while OTTAVA_AMP_IMAGE_TAG is set: set one of the two");
    if (baseImage !== undefined && !/^ami-[0-9a-f]{8,17}$/.test(baseImage))
      problems.push(`OTTAVA_AMP_BASE_IMAGE_ID must be an AMI's id (ami-0123abcd…), not '${baseImage}'`);
    if (setting(env, "OTTAVA_AMP_FLAVOR_ID") === undefined)
      problems.push(
        "OTTAVA_AMP_FLAVOR_ID is not set: the amphorae's EC2 instance type, e.g. t3.small (a flavor profile's compute_flavor may name another)",
      );
    inAccount = { firstBoot: imageTag === undefined };
    mgmtCidr = AMPHORA_SUBNETS_CIDR;
  } else {
    for (const name of EC2_SETTINGS)
      if (setting(env, name) !== undefined)
        problems.push(`${name} is a setting of OTTAVA_COMPUTE_DRIVER=ec2, which this deploy does not use`);
    // The external management network: always (heartbeats come from it); with rest, also routed to.
    if (!mgmtCidr) {
      problems.push(
        `OTTAVA_AMPHORA_MGMT_CIDR is not set: it is the amphora management network (Octavia's lb-mgmt-net), e.g. 172.16.0.0/12. ` +
          `The heartbeat receiver admits UDP ${heartbeatPort} from that range only: without it every heartbeat would be dropped, and no amphora failure ever noticed`,
      );
    } else {
      const cidr = parseIpv4Cidr(mgmtCidr);
      if (typeof cidr === "string") problems.push(`OTTAVA_AMPHORA_MGMT_CIDR '${mgmtCidr}' is ${cidr}`);
      else if (within(cidr, vpc))
        problems.push(
          `OTTAVA_AMPHORA_MGMT_CIDR '${mgmtCidr}' lies inside the VPC's own ${VPC_CIDR}: the management network must be another range`,
        );
    }
    if (gateway !== undefined) {
      const kind = { tgw: "transitGatewayId", vgw: "gatewayId", pcx: "vpcPeeringConnectionId" }[gateway.slice(0, 3)];
      if (!kind || !/^(tgw|vgw|pcx)-[0-9a-f]{8,17}$/.test(gateway)) {
        problems.push(
          `OTTAVA_AMPHORA_MGMT_GATEWAY must be a transit gateway (tgw-…), virtual private gateway (vgw-…) or peering connection (pcx-…), not '${gateway}'`,
        );
      } else if (mgmtCidr) {
        mgmtRoute = { cidrBlock: mgmtCidr, [kind]: gateway };
      }
    } else if (amphoraDriver === "rest") {
      problems.push(
        "OTTAVA_AMPHORA_MGMT_GATEWAY is not set: with OTTAVA_AMPHORA_DRIVER=rest the task functions call the amphora agents, " +
          "and the VPC routes OTTAVA_AMPHORA_MGMT_CIDR through this transit gateway (tgw-…), virtual private gateway (vgw-…) or peering connection (pcx-…)",
      );
    }
  }

  // Anti-affinity: placement groups, which only the ec2 driver makes.
  const antiAffinity = setting(env, "OTTAVA_ENABLE_ANTI_AFFINITY");
  if (antiAffinity !== undefined) {
    if (!/^(true|1|yes|on|false|0|no|off)$/i.test(antiAffinity))
      problems.push(`OTTAVA_ENABLE_ANTI_AFFINITY must be true or false, not '${antiAffinity}'`);
    else if (/^(true|1|yes|on)$/i.test(antiAffinity) && computeDriver !== "ec2")
      problems.push(
        "OTTAVA_ENABLE_ANTI_AFFINITY=true needs OTTAVA_COMPUTE_DRIVER=ec2 (spread placement groups): another compute driver ignores it",
      );
  }

  // The health managers' addresses external amphorae report to, until an admin sets them: <IPv4>:<port> each.
  // (With ec2 the stacks set them: the heartbeat load balancer's.)
  const controllers = inAccount ? [] : (setting(env, "OTTAVA_CONTROLLER_IP_PORT_LIST") ?? "").split(",");
  for (const entry of controllers.map((e) => e.trim()).filter(Boolean)) {
    const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(entry);
    if (!m || typeof parseIpv4Cidr(`${m[1]}/32`) === "string" || Number(m[2]) < 1 || Number(m[2]) > 65535)
      problems.push(`OTTAVA_CONTROLLER_IP_PORT_LIST holds '${entry}', which is not <IPv4 address>:<port>`);
  }

  // Certificates: the local manager's PEM files would be on a Lambda's passing disk.
  const rawCertManager = setting(env, "OTTAVA_CERT_MANAGER") ?? "noop";
  const certManager = rawCertManager === "secretsmanager" ? "secretsmanager" : "noop";
  if (rawCertManager !== "noop" && rawCertManager !== "secretsmanager")
    problems.push(
      `OTTAVA_CERT_MANAGER on AWS must be noop or secretsmanager, not '${rawCertManager}'` +
        (rawCertManager === "local" ? " (local keeps PEM files on one host's disk: on AWS, Secrets Manager keeps them)" : ""),
    );
  const certKmsKeyArns = (setting(env, "OTTAVA_CERT_KMS_KEY_ARNS") ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  for (const arn of certKmsKeyArns)
    if (!/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/.test(arn))
      problems.push(`OTTAVA_CERT_KMS_KEY_ARNS holds '${arn}', which is not a KMS key's ARN (arn:aws:kms:<region>:<account>:key/<id>)`);
  if (certKmsKeyArns.length > 0 && certManager !== "secretsmanager")
    problems.push("OTTAVA_CERT_KMS_KEY_ARNS is for OTTAVA_CERT_MANAGER=secretsmanager: the keys certificate secrets are encrypted with");

  // The policy file ships in the API's bundle: it must be there, a file, where the deploy runs.
  const rawPolicyFile = setting(env, "OTTAVA_POLICY_FILE");
  let policyFile: string | undefined;
  if (rawPolicyFile !== undefined) {
    const absolute = resolve(root, rawPolicyFile);
    const kind = statSync(absolute, { throwIfNoEntry: false });
    if (!kind?.isFile())
      problems.push(
        `OTTAVA_POLICY_FILE '${rawPolicyFile}' is ${kind ? "not a file" : "missing"} (${absolute}): give the policy file's path, absolute or relative to ${root}`,
      );
    else policyFile = relative(root, absolute);
  }

  const alarmTopic = setting(env, "OTTAVA_ALARM_TOPIC");
  if (alarmTopic !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/.test(alarmTopic)) {
    problems.push(
      `OTTAVA_ALARM_TOPIC must be the ARN of a standard SNS topic (arn:aws:sns:<region>:<account>:<name>), not '${alarmTopic}'`,
    );
  }

  // The secrets this deploy reads; sst.Secret reads each from SST_SECRET_<Name>.
  const given = (name: SecretName) => (env[`SST_SECRET_${name}`] ?? "") !== "";
  const required: SecretName[] = ["CaCertificate", "CaPrivateKey", "HeartbeatKey"];
  if (authStrategy === "keystone") required.push("KeystoneUrl", "KeystoneUsername", "KeystonePassword", "KeystoneProjectName");
  if (amphoraDriver === "rest") required.push("ClientCert");
  const missing = required.filter((name) => !given(name));
  if (missing.length) {
    const width = Math.max(...missing.map((n) => n.length));
    problems.push(
      `these secrets are not set for stage "${stage}"; set each with \`npx sst secret set <Name> <value> --stage ${stage}\` ` +
        `(a PEM file: \`npx sst secret set CaPrivateKey --stage ${stage} < ca.key\`):\n` +
        missing.map((n) => `      ${n.padEnd(width)}  ${WHAT[n]}`).join("\n"),
    );
  }
  const secrets: SecretName[] = [...required, ...(given("CaPrivateKeyPassphrase") ? (["CaPrivateKeyPassphrase"] as const) : [])];

  if (problems.length) {
    throw new DeployConfigError(
      `Ottava cannot be deployed to stage "${stage}" as configured:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  }
  return {
    stage,
    production,
    authStrategy,
    apiIamAuth: authStrategy === "noauth",
    amphoraDriver,
    computeDriver,
    networkDriver,
    heartbeatPort,
    amphoraAgentPort,
    inAccount,
    mgmtCidr,
    mgmtRoute,
    certManager,
    certKmsKeyArns,
    policyFile,
    alarmTopic,
    secrets,
    stored: secrets.filter((n): n is StoredSecret => n in STORED_SECRETS),
  };
}

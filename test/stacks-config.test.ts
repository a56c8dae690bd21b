// The deploy's decisions (stacks/config.ts), made before SST creates anything: safe by default, and a
// message that says what to set when something is missing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AMPHORA_SUBNETS_CIDR, DeployConfigError, NOAUTH_OPT_IN, STORED_SECRETS, deployPlan, parseIpv4Cidr } from "../stacks/config";
import { SECRET_SETTINGS } from "@ottava/core";
import { walkthroughLines, words } from "./support/walkthrough";

const secrets = (...names: string[]) => Object.fromEntries(names.map((n) => [`SST_SECRET_${n}`, `value of ${n}`]));
const KEYSTONE = secrets("KeystoneUrl", "KeystoneUsername", "KeystonePassword", "KeystoneProjectName");
const ALWAYS = secrets("CaCertificate", "CaPrivateKey", "HeartbeatKey");
const BASE = { OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.0/12", ...ALWAYS, ...KEYSTONE };

const failure = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DeployConfigError);
    return (e as Error).message;
  }
  throw new Error("the deploy was not refused");
};

describe("deployPlan: authentication", () => {
  it("is keystone by default, with its four secrets and the three every stage needs", () => {
    const plan = deployPlan(BASE, "dev", false);
    expect(plan).toMatchObject({
      authStrategy: "keystone",
      apiIamAuth: false,
      amphoraDriver: "noop",
      computeDriver: "noop",
      networkDriver: "noop",
      heartbeatPort: 5555,
      mgmtCidr: "172.16.0.0/12",
      mgmtRoute: undefined,
    });
    expect(plan.secrets.sort()).toEqual([
      "CaCertificate",
      "CaPrivateKey",
      "HeartbeatKey",
      "KeystonePassword",
      "KeystoneProjectName",
      "KeystoneUrl",
      "KeystoneUsername",
    ]);
    // Only the secret ones go to SSM: the URL, names and the CA certificate are plain settings.
    expect(plan.stored.sort()).toEqual(["CaPrivateKey", "HeartbeatKey", "KeystonePassword"]);
  });

  it("stops a keystone deploy whose secrets are missing, naming each and how to set it", () => {
    const message = failure(() =>
      deployPlan({ OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.0/12", ...secrets("CaCertificate", "KeystoneUrl") }, "staging", false),
    );
    expect(message).toContain('Ottava cannot be deployed to stage "staging" as configured:');
    expect(message).toContain("npx sst secret set <Name> <value> --stage staging");
    for (const name of ["CaPrivateKey", "HeartbeatKey", "KeystoneUsername", "KeystonePassword", "KeystoneProjectName"])
      expect(message).toMatch(new RegExp(`\\n\\s+${name}\\s`));
    expect(message).not.toMatch(/\n\s+KeystoneUrl\s/);
    expect(message).not.toMatch(/\n\s+CaCertificate\s/);
  });

  it("takes an empty secret for a missing one", () => {
    expect(failure(() => deployPlan({ ...BASE, SST_SECRET_KeystonePassword: "" }, "dev", false))).toMatch(
      /\n\s+KeystonePassword\s+that user's password/,
    );
  });

  it("refuses noauth without the opt-in, and with an opt-in that names another stage", () => {
    const env = { ...BASE, OTTAVA_AUTH_STRATEGY: "noauth" };
    expect(failure(() => deployPlan(env, "dev", false))).toContain(
      `OTTAVA_AUTH_STRATEGY=noauth makes every caller an admin. On AWS it needs ${NOAUTH_OPT_IN}=dev as well`,
    );
    expect(() => deployPlan({ ...env, [NOAUTH_OPT_IN]: "test" }, "dev", false)).toThrow(DeployConfigError);
  });

  it("allows noauth with the opt-in, behind IAM authorization, and without Keystone's secrets", () => {
    const plan = deployPlan(
      { OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.0/12", ...ALWAYS, OTTAVA_AUTH_STRATEGY: "noauth", [NOAUTH_OPT_IN]: "dev" },
      "dev",
      false,
    );
    expect(plan).toMatchObject({ authStrategy: "noauth", apiIamAuth: true });
    expect(plan.secrets.some((s) => s.startsWith("Keystone"))).toBe(false);
  });

  it("never allows noauth on a production stage, opt-in or not", () => {
    const message = failure(() =>
      deployPlan({ ...BASE, OTTAVA_AUTH_STRATEGY: "noauth", [NOAUTH_OPT_IN]: "production" }, "production", true),
    );
    expect(message).toContain('stage "production" is a production stage, which always authenticates with Keystone');
  });

  it("refuses an unknown strategy", () => {
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AUTH_STRATEGY: "none" }, "dev", false))).toContain(
      "OTTAVA_AUTH_STRATEGY must be keystone or noauth, not 'none'",
    );
  });
});

describe("deployPlan: the amphora management network", () => {
  it("is required, saying why", () => {
    const { OTTAVA_AMPHORA_MGMT_CIDR: _, ...env } = BASE;
    expect(failure(() => deployPlan(env, "dev", false))).toContain("OTTAVA_AMPHORA_MGMT_CIDR is not set");
    expect(failure(() => deployPlan(env, "dev", false))).toContain(
      "without it every heartbeat would be dropped, and no amphora failure ever noticed",
    );
  });

  it("must be a network address outside the VPC, no wider than a /8", () => {
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.1/12" }, "dev", false))).toContain(
      "not a network address: write 172.16.0.0/12",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_CIDR: "10.0.8.0/24" }, "dev", false))).toContain(
      "inside the VPC's own 10.0.0.0/16",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_CIDR: "0.0.0.0/0" }, "dev", false))).toContain("wider than a /8");
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_CIDR: "fd00::/64" }, "dev", false))).toContain("not an IPv4 CIDR");
    // A range that holds the VPC's is fine: the VPC's own addresses stay local.
    expect(deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_CIDR: "10.0.0.0/8" }, "dev", false).mgmtCidr).toBe("10.0.0.0/8");
  });

  it("with the REST driver needs a gateway to route to, and the agents' client certificate", () => {
    const message = failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_DRIVER: "rest" }, "dev", false));
    expect(message).toContain("OTTAVA_AMPHORA_MGMT_GATEWAY is not set");
    expect(message).toMatch(/\n\s+ClientCert\s/);
    const plan = deployPlan(
      { ...BASE, ...secrets("ClientCert"), OTTAVA_AMPHORA_DRIVER: "rest", OTTAVA_AMPHORA_MGMT_GATEWAY: "tgw-0123456789abcdef0" },
      "dev",
      false,
    );
    expect(plan.mgmtRoute).toEqual({ cidrBlock: "172.16.0.0/12", transitGatewayId: "tgw-0123456789abcdef0" });
    expect(plan.stored).toContain("ClientCert");
  });

  it("routes through a virtual private gateway or a peering connection too, and refuses anything else", () => {
    expect(deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_GATEWAY: "vgw-0123abcd" }, "dev", false).mgmtRoute).toEqual({
      cidrBlock: "172.16.0.0/12",
      gatewayId: "vgw-0123abcd",
    });
    expect(deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_GATEWAY: "pcx-0123abcd" }, "dev", false).mgmtRoute).toEqual({
      cidrBlock: "172.16.0.0/12",
      vpcPeeringConnectionId: "pcx-0123abcd",
    });
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_MGMT_GATEWAY: "igw-0123abcd" }, "dev", false))).toContain(
      "OTTAVA_AMPHORA_MGMT_GATEWAY must be a transit gateway",
    );
  });

  it("refuses the local drivers and bad ports", () => {
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_AMPHORA_DRIVER: "local" }, "dev", false))).toContain(
      "local runs only under npm start",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_COMPUTE_DRIVER: "local" }, "dev", false))).toContain(
      "OTTAVA_COMPUTE_DRIVER on AWS must be noop or ec2, not 'local' (local runs only under npm start)",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_NETWORK_DRIVER: "local" }, "dev", false))).toContain(
      "OTTAVA_NETWORK_DRIVER on AWS must be noop or vpc, not 'local' (local runs only under npm start)",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_HEARTBEAT_PORT: "0" }, "dev", false))).toContain(
      "OTTAVA_HEARTBEAT_PORT must be a port from 1 to 65535, not '0'",
    );
  });
});

describe("deployPlan: the amphorae in the account (OTTAVA_COMPUTE_DRIVER=ec2)", () => {
  const { OTTAVA_AMPHORA_MGMT_CIDR: _, ...noMgmt } = BASE;
  const EC2 = {
    ...noMgmt,
    ...secrets("ClientCert"),
    OTTAVA_AMPHORA_DRIVER: "rest",
    OTTAVA_COMPUTE_DRIVER: "ec2",
    OTTAVA_NETWORK_DRIVER: "vpc",
    OTTAVA_AMP_IMAGE_TAG: "amphora",
    OTTAVA_AMP_FLAVOR_ID: "t3.small",
  };

  it("boots them in the stacks' management subnets: no external network, no route to one", () => {
    expect(deployPlan(EC2, "dev", false)).toMatchObject({
      amphoraDriver: "rest",
      computeDriver: "ec2",
      networkDriver: "vpc",
      inAccount: { firstBoot: false },
      mgmtCidr: AMPHORA_SUBNETS_CIDR,
      mgmtRoute: undefined,
    });
    // The external mode stays as it was.
    expect(deployPlan(BASE, "dev", false)).toMatchObject({ inAccount: undefined, mgmtCidr: "172.16.0.0/12" });
  });

  it("takes the first-boot path without an image tag, from a stock AMI's id", () => {
    const { OTTAVA_AMP_IMAGE_TAG: _tag, ...env } = EC2;
    expect(deployPlan({ ...env, OTTAVA_AMP_BASE_IMAGE_ID: "ami-0123456789abcdef0" }, "dev", false).inAccount).toEqual({ firstBoot: true });
    expect(failure(() => deployPlan({ ...env, OTTAVA_AMP_BASE_IMAGE_ID: "debian-12" }, "dev", false))).toContain(
      "OTTAVA_AMP_BASE_IMAGE_ID must be an AMI's id (ami-0123abcd…), not 'debian-12'",
    );
    expect(failure(() => deployPlan(env, "dev", false))).toContain(
      "OTTAVA_COMPUTE_DRIVER=ec2 needs an image: OTTAVA_AMP_IMAGE_TAG, the tag of the baked amphora image",
    );
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_AMP_BASE_IMAGE_ID: "ami-0123456789abcdef0" }, "dev", false))).toContain(
      "OTTAVA_AMP_BASE_IMAGE_ID is never booted while OTTAVA_AMP_IMAGE_TAG is set: set one of the two",
    );
  });

  it("needs the instance type", () => {
    const { OTTAVA_AMP_FLAVOR_ID: _, ...env } = EC2;
    expect(failure(() => deployPlan(env, "dev", false))).toContain("OTTAVA_AMP_FLAVOR_ID is not set: the amphorae's EC2 instance type");
  });

  it("refuses the external network's settings, and those the stacks set from what they make", () => {
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.0/12" }, "dev", false))).toContain(
      `OTTAVA_AMPHORA_MGMT_CIDR is for amphorae on an external management network: with OTTAVA_COMPUTE_DRIVER=ec2 the amphorae boot in the management subnets the stacks make in the VPC (${AMPHORA_SUBNETS_CIDR}); unset it`,
    );
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_AMPHORA_MGMT_GATEWAY: "tgw-0123456789abcdef0" }, "dev", false))).toContain(
      "OTTAVA_AMPHORA_MGMT_GATEWAY is for amphorae on an external management network",
    );
    for (const [name, value] of [
      ["OTTAVA_AMP_BOOT_NETWORK_LIST", "subnet-0123abcd"],
      ["OTTAVA_AMP_SECGROUP_LIST", "sg-0123abcd"],
      ["OTTAVA_AMP_INSTANCE_PROFILE", "my-profile"],
    ])
      expect(failure(() => deployPlan({ ...EC2, [name!]: value }, "dev", false))).toContain(
        `${name} is set by the stacks with OTTAVA_COMPUTE_DRIVER=ec2`,
      );
  });

  it("refuses the combinations the drivers cannot run: ec2 without rest or vpc, vpc without ec2", () => {
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_AMPHORA_DRIVER: "noop" }, "dev", false))).toContain(
      "OTTAVA_COMPUTE_DRIVER=ec2 needs OTTAVA_AMPHORA_DRIVER=rest",
    );
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_NETWORK_DRIVER: "noop" }, "dev", false))).toContain(
      "OTTAVA_COMPUTE_DRIVER=ec2 needs OTTAVA_NETWORK_DRIVER=vpc",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_NETWORK_DRIVER: "vpc" }, "dev", false))).toContain(
      "OTTAVA_NETWORK_DRIVER=vpc needs OTTAVA_COMPUTE_DRIVER=ec2",
    );
  });

  it("refuses the ec2 driver's settings and anti-affinity on another compute driver", () => {
    const message = failure(() =>
      deployPlan(
        { ...BASE, OTTAVA_AMP_IMAGE_TAG: "amphora", OTTAVA_AMP_FLAVOR_ID: "t3.small", OTTAVA_ENABLE_ANTI_AFFINITY: "true" },
        "dev",
        false,
      ),
    );
    expect(message).toContain("OTTAVA_AMP_IMAGE_TAG is a setting of OTTAVA_COMPUTE_DRIVER=ec2, which this deploy does not use");
    expect(message).toContain("OTTAVA_AMP_FLAVOR_ID is a setting of OTTAVA_COMPUTE_DRIVER=ec2");
    expect(message).toContain("OTTAVA_ENABLE_ANTI_AFFINITY=true needs OTTAVA_COMPUTE_DRIVER=ec2");
    // Off is fine anywhere; on with ec2; anything else is no boolean.
    expect(deployPlan({ ...BASE, OTTAVA_ENABLE_ANTI_AFFINITY: "false" }, "dev", false).computeDriver).toBe("noop");
    expect(deployPlan({ ...EC2, OTTAVA_ENABLE_ANTI_AFFINITY: "true" }, "dev", false).computeDriver).toBe("ec2");
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_ENABLE_ANTI_AFFINITY: "spread" }, "dev", false))).toContain(
      "OTTAVA_ENABLE_ANTI_AFFINITY must be true or false, not 'spread'",
    );
  });

  it("takes external health-manager addresses as <IPv4>:<port>; in the account, the stacks set them", () => {
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_CONTROLLER_IP_PORT_LIST: "hm.example.com:5555" }, "dev", false))).toContain(
      "OTTAVA_CONTROLLER_IP_PORT_LIST holds 'hm.example.com:5555', which is not <IPv4 address>:<port>",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_CONTROLLER_IP_PORT_LIST: "192.168.1.5:70000" }, "dev", false))).toContain(
      "OTTAVA_CONTROLLER_IP_PORT_LIST holds '192.168.1.5:70000'",
    );
    expect(() => deployPlan({ ...BASE, OTTAVA_CONTROLLER_IP_PORT_LIST: "192.168.1.5:5555, 192.168.2.5:5555" }, "dev", false)).not.toThrow();
    expect(failure(() => deployPlan({ ...EC2, OTTAVA_CONTROLLER_IP_PORT_LIST: "10.0.4.10:5555" }, "dev", false))).toContain(
      "OTTAVA_CONTROLLER_IP_PORT_LIST is set by the stacks with OTTAVA_COMPUTE_DRIVER=ec2",
    );
  });

  it("lists every problem of the data plane at once", () => {
    const message = failure(() =>
      deployPlan(
        { ...noMgmt, OTTAVA_COMPUTE_DRIVER: "ec2", OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.0/12", OTTAVA_AMP_SECGROUP_LIST: "sg-0123abcd" },
        "dev",
        false,
      ),
    );
    // rest, vpc, the external CIDR, the group list, an image, the instance type.
    expect(message.split("\n  - ")).toHaveLength(1 + 6);
  });
});

describe("deployPlan: the rest", () => {
  it("takes an SNS topic ARN for the alarms, or none (the stacks make one)", () => {
    expect(deployPlan(BASE, "dev", false).alarmTopic).toBeUndefined();
    expect(deployPlan({ ...BASE, OTTAVA_ALARM_TOPIC: "arn:aws:sns:eu-west-1:123456789012:ops" }, "dev", false).alarmTopic).toBe(
      "arn:aws:sns:eu-west-1:123456789012:ops",
    );
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_ALARM_TOPIC: "ops" }, "dev", false))).toContain(
      "OTTAVA_ALARM_TOPIC must be the ARN of a standard SNS topic",
    );
  });

  it("keeps certificates in Secrets Manager or nowhere (noop), never on a function's disk; KMS keys only with Secrets Manager", () => {
    expect(deployPlan(BASE, "dev", false)).toMatchObject({ certManager: "noop", certKmsKeyArns: [] });
    const key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    expect(
      deployPlan({ ...BASE, OTTAVA_CERT_MANAGER: "secretsmanager", OTTAVA_CERT_KMS_KEY_ARNS: ` ${key} ,` }, "dev", false),
    ).toMatchObject({ certManager: "secretsmanager", certKmsKeyArns: [key] });
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_CERT_MANAGER: "local" }, "dev", false))).toContain(
      "OTTAVA_CERT_MANAGER on AWS must be noop or secretsmanager, not 'local' (local keeps PEM files on one host's disk",
    );
    expect(
      failure(() => deployPlan({ ...BASE, OTTAVA_CERT_MANAGER: "secretsmanager", OTTAVA_CERT_KMS_KEY_ARNS: "alias/certs" }, "dev", false)),
    ).toContain("OTTAVA_CERT_KMS_KEY_ARNS holds 'alias/certs', which is not a KMS key's ARN");
    expect(failure(() => deployPlan({ ...BASE, OTTAVA_CERT_KMS_KEY_ARNS: key }, "dev", false))).toContain(
      "OTTAVA_CERT_KMS_KEY_ARNS is for OTTAVA_CERT_MANAGER=secretsmanager",
    );
  });

  it("takes the policy file by an absolute path or one relative to the app's root, as a path from that root; refuses a missing one or a directory", () => {
    const root = mkdtempSync(join(tmpdir(), "ottava-deploy-"));
    try {
      mkdirSync(join(root, "app"));
      writeFileSync(join(root, "policy.yaml"), '"load-balancer:read": "rule:admin_or_owner"\n');
      const app = join(root, "app");
      expect(deployPlan(BASE, "dev", false, app).policyFile).toBeUndefined();
      expect(deployPlan({ ...BASE, OTTAVA_POLICY_FILE: join(root, "policy.yaml") }, "dev", false, app).policyFile).toBe("../policy.yaml");
      expect(deployPlan({ ...BASE, OTTAVA_POLICY_FILE: "../policy.yaml" }, "dev", false, app).policyFile).toBe("../policy.yaml");
      expect(failure(() => deployPlan({ ...BASE, OTTAVA_POLICY_FILE: "/nowhere/policy.yaml" }, "dev", false, app))).toContain(
        `OTTAVA_POLICY_FILE '/nowhere/policy.yaml' is missing (/nowhere/policy.yaml): give the policy file's path, absolute or relative to ${app}`,
      );
      expect(failure(() => deployPlan({ ...BASE, OTTAVA_POLICY_FILE: root }, "dev", false, app))).toContain(
        `OTTAVA_POLICY_FILE '${root}' is not a file`,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("stores the CA key's passphrase when one is set", () => {
    expect(deployPlan(BASE, "dev", false).stored).not.toContain("CaPrivateKeyPassphrase");
    expect(deployPlan({ ...BASE, ...secrets("CaPrivateKeyPassphrase") }, "dev", false).stored).toContain("CaPrivateKeyPassphrase");
  });

  it("lists every problem at once", () => {
    const message = failure(() => deployPlan({ OTTAVA_AUTH_STRATEGY: "noauth", OTTAVA_ALARM_TOPIC: "x" }, "dev", false));
    expect(message.split("\n  - ")).toHaveLength(1 + 4); // noauth, mgmt CIDR, alarm topic, secrets
  });

  it("stores only settings the functions read from parameters", () => {
    for (const setting of Object.values(STORED_SECRETS)) expect(SECRET_SETTINGS).toContain(setting);
  });

  it("parses CIDRs", () => {
    expect(parseIpv4Cidr("192.168.0.0/16")).toEqual({ base: 0xc0a80000, prefix: 16 });
    expect(parseIpv4Cidr("192.168.0.300/24")).toBe("not an IPv4 CIDR such as 172.16.0.0/12");
    expect(parseIpv4Cidr("192.168.1.1/32")).toEqual({ base: 0xc0a80101, prefix: 32 });
  });
});

describe("deployPlan: the walkthrough (docs/deploying.md, Your first load balancer on AWS)", () => {
  it("takes the page's settings and secrets as they are: the in-account deploy with the AWS drivers", () => {
    const lines = walkthroughLines();
    // Its settings: the `export OTTAVA_...` lines of step 2.
    const env: Record<string, string> = {};
    for (const line of lines.filter((l) => /^export OTTAVA_/.test(l)))
      for (const word of words(line, {}).slice(1)) {
        const [name, value] = word.split("=");
        env[name!] = value!;
      }
    // Its secrets: the names its `npx sst secret set` lines set.
    const set = lines.filter((l) => l.startsWith("npx sst secret set ")).map((l) => l.split(" ")[4]!);
    expect(set.sort()).toEqual([
      "CaCertificate",
      "CaPrivateKey",
      "ClientCert",
      "HeartbeatKey",
      "KeystonePassword",
      "KeystoneProjectName",
      "KeystoneUrl",
      "KeystoneUsername",
    ]);
    const plan = deployPlan({ ...env, ...secrets(...set) }, "dev", false);
    expect(plan).toMatchObject({ computeDriver: "ec2", networkDriver: "vpc", amphoraDriver: "rest", certManager: "secretsmanager" });
  });
});

// The AWS deployment, checked offline: sst.config.ts's run() evaluated by SST's own components under
// Pulumi's mocks (test/support/synth.ts), then the recorded resources checked against the code they
// deploy: handlers, state machines and their roles, the API route, the settings each workload reads,
// secrets and their parameters, the table, IAM, tracing and logs, alarms, the jobs and the network. Four
// deploys are synthesized (VARIANTS, at the same time): every optional part on a test stage (the AWS data
// plane in the account, a baked image), the first-boot trial of that data plane, the noauth opt-in, and a
// production stage as an operator would set one up (amphorae on an external management network).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ResourceNotFoundException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import {
  AMPHORA_BOOT_FAILED_ALERT,
  SECRET_SETTINGS,
  healthCheck,
  loadConfig,
  readSecretSettings,
  sweepOrphans,
  type Amphora,
  type CloudResource,
  type HealthCheckDeps,
  type SweepDeps,
} from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { ensureTable } from "@ottava/db";
import {
  AGENT_TASKS,
  CA_TASKS,
  CERT_TASKS,
  COMPUTE_TASKS,
  FLOW_NAMES,
  FLOW_TASKS,
  HEARTBEAT_KEY_TASKS,
  NOTIFYING_TASKS,
  definitionOf,
} from "@ottava/controller";
import { captureOutput } from "@ottava/edge/testing";
import { readAwsCallRecord } from "@ottava/aws/testing";
import { HEALTH_MANAGER, IMPLIED, SWEEP, UNRECORDED_CALLS, WORKLOAD_CALLS } from "../stacks/iam-calls";
import { AMPHORA_SUBNETS_CIDR, parseIpv4Cidr } from "../stacks/config";
import { synthesize, type SynthResource, type Synthesis } from "./support/synth";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CONFIG_MODULE = "packages/core/src/config.ts";
const STEP_FUNCTIONS_ENGINE = "packages/controller/src/engine-sfn.ts";
const HEALTH_MANAGER_ENTRY = "packages/controller/src/health/main.ts";
/** The synthesis' region (test/support/synth/program.mjs). */
const REGION = "us-east-1";
/** The periods running in which a job's throttles alarm (stacks/alarms.ts, JOB_THROTTLE_PERIODS). */
const JOB_THROTTLE_PERIODS = 3;
/** How long every log is kept (stacks/settings.ts: a month). */
const LOG_RETENTION_DAYS = 30;

/** A deployed piece of Ottava's code: a Lambda function, or the health manager's container. */
interface Workload {
  name: string;
  env: Record<string, string>;
  /** A container's task-definition secrets: name → valueFrom (an SSM parameter's ARN). */
  containerSecrets: Record<string, string>;
  /** The repository's source files in its bundle. */
  sources: string[];
  /** A function's own resource (undefined for a container). */
  resource?: SynthResource;
}
type Fn = Workload & { resource: SynthResource };

// ─── The deploys synthesized ─────────────────────────────────────────────────────────────────────────
interface Variant {
  stage: string;
  /** The deployer's environment (stacks/config.ts reads it); every SST secret has a made-up value unless set here. */
  env: Record<string, string>;
  /** What the deploy must be, as the test expects it from `env`. */
  auth: "keystone" | "noauth";
  rest: boolean;
  production: boolean;
  /** The CA key's passphrase is set. */
  passphrase: boolean;
  /** OTTAVA_CERT_MANAGER=secretsmanager, and the customer-managed KMS keys of OTTAVA_CERT_KMS_KEY_ARNS. */
  certificates: { kms: string[] } | undefined;
  /** OTTAVA_COMPUTE_DRIVER=ec2: the amphorae in the stacks' management subnets; firstBoot without an image tag. Else an external management network. */
  inAccount: { firstBoot: boolean } | undefined;
}

/** A customer-managed KMS key certificate secrets are encrypted with (the full deploy's OTTAVA_CERT_KMS_KEY_ARNS). */
const CERT_KMS_KEY = `arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab`;

// ─── Where settings go ──────────────────────────────────────────────────────────────────────────────
// Every OTTAVA_* setting the configuration reads (loadConfig, derived below) goes from the deployer's
// environment to every workload whose code loads the configuration, unchanged (stacks/settings.ts),
// except the ones named here.

/** `npm start` only, never passed to AWS (stacks/README.md, "Settings"). */
const LOCAL_ONLY = new Set([
  "OTTAVA_BIND_HOST", // the local server's address (the health manager's container is given 0.0.0.0 by its stack)
  "OTTAVA_BIND_PORT",
  "OTTAVA_DYNAMODB_ENDPOINT", // DynamoDB Local
  "OTTAVA_FLOW_CONCURRENCY", // the local flow runner
  "OTTAVA_DATAPLANE", // the local data plane and its drivers; on AWS the no-op drivers, the defaults
  "OTTAVA_LOCAL_VIP_RANGE",
  "OTTAVA_HAPROXY_BINARY",
  "OTTAVA_CERT_STORAGE_PATH", // the local certificate manager's PEM files (stacks/config.ts refuses OTTAVA_CERT_MANAGER=local)
  "OTTAVA_CLEANUP_INTERVAL", // npm start's housekeeping timers; on AWS, the schedules in stacks/jobs.ts
  "OTTAVA_CERT_INTERVAL",
]);

type Rule = (w: Workload, d: Deployment) => boolean;

/** The settings the stacks set themselves, each on the workloads that need it (values checked below). */
const SET_BY_STACKS: Record<string, Rule> = {
  OTTAVA_TABLE_NAME: (w) => loadsConfig(w),
  OTTAVA_STAGE: (w) => loadsConfig(w), // the AWS drivers' tags
  OTTAVA_STATE_MACHINE_ARN_PREFIX: (w) => w.sources.includes(STEP_FUNCTIONS_ENGINE), // what starts or reads flows
  OTTAVA_TASK: (w) => w.sources.includes("packages/controller/src/lambda.ts"), // the task functions' entry
  OTTAVA_POLICY_FILE: (w, d) => w === d.api, // the deployer's policy file, shipped in the API's bundle
  OTTAVA_AMP_INSTANCE_PROFILE: (w, d) => isTask(COMPUTE_TASKS)(w, d), // the amphorae's instance profile (stacks/compute.ts)
  // With ec2, the management subnets and the amphorae's security group the stacks make, and the heartbeat
  // load balancer's fixed addresses (stacks/network.ts).
  OTTAVA_AMP_BOOT_NETWORK_LIST: (w, d) => d.variant.inAccount !== undefined && loadsConfig(w),
  OTTAVA_AMP_SECGROUP_LIST: (w, d) => d.variant.inAccount !== undefined && loadsConfig(w),
  OTTAVA_CONTROLLER_IP_PORT_LIST: (w, d) => d.variant.inAccount !== undefined && loadsConfig(w),
  OTTAVA_EVENT_BUS_NAME: (w, d) => isTask(NOTIFYING_TASKS)(w, d), // the events' bus (stacks/events.ts)
};

/** Passed from the deployer's environment to some workloads only: nowhere else. */
const ONLY_TO: Record<string, Rule> = {
  // Only the API validates tokens; elsewhere `keystone` would make loadConfig demand the Keystone service
  // user, which only the API is given.
  OTTAVA_AUTH_STRATEGY: (w, d) => w === d.api,
};

// ─── SECRETS: the one place saying which secret reaches which workload (adjust it when secrets move) ─
// Every secret is an SST secret (`sst secret set <sst> ...`), never read from the deployer's environment.
// A stored one (the settings packages/core/src/config.ts calls SECRET_SETTINGS) is kept in an SSM
// SecureString: a function gets only OTTAVA_<NAME>_PARAMETER, "<the parameter's name>:<its version>", and
// the health manager's container OTTAVA_<NAME> through its task definition's `secrets` (valueFrom: the
// parameter's ARN); its value is in no environment, in nothing deployed but its parameter. A plain one (a
// URL, names, a certificate) is the setting OTTAVA_<NAME> itself, with the SST secret's value. A workload
// that does not need a secret gets neither.
const isTask =
  (tasks: readonly string[]): Rule =>
  (w) =>
    tasks.includes(w.env.OTTAVA_TASK ?? "");
const isHealthManager: Rule = (w) => w.sources.includes(HEALTH_MANAGER_ENTRY);
const keystoneApi: Rule = (w, d) => w === d.api && d.variant.auth === "keystone";
const SECRETS: Record<string, { sst: string; stored: boolean; to: Rule }> = {
  // The Keystone service user the API validates tokens as: the API alone, under keystone.
  KEYSTONE_URL: { sst: "KeystoneUrl", stored: false, to: keystoneApi },
  KEYSTONE_USERNAME: { sst: "KeystoneUsername", stored: false, to: keystoneApi },
  KEYSTONE_PROJECT_NAME: { sst: "KeystoneProjectName", stored: false, to: keystoneApi },
  KEYSTONE_PASSWORD: { sst: "KeystonePassword", stored: true, to: keystoneApi },
  // The CA amphora certificates are signed with: only the tasks that sign (CA_TASKS); the passphrase when set.
  CA_CERTIFICATE: { sst: "CaCertificate", stored: false, to: isTask(CA_TASKS) },
  CA_PRIVATE_KEY: { sst: "CaPrivateKey", stored: true, to: isTask(CA_TASKS) },
  CA_PRIVATE_KEY_PASSPHRASE: { sst: "CaPrivateKeyPassphrase", stored: true, to: (w, d) => d.variant.passphrase && isTask(CA_TASKS)(w, d) },
  // The agents' client certificate: the tasks that call agents (AGENT_TASKS), with the REST driver only.
  CLIENT_CERT: { sst: "ClientCert", stored: true, to: (w, d) => d.variant.rest && isTask(AGENT_TASKS)(w, d) },
  // The heartbeats' HMAC key: the tasks that write it into the agents' configuration, and the receiver.
  HEARTBEAT_KEY: { sst: "HeartbeatKey", stored: true, to: (w, d) => isTask(HEARTBEAT_KEY_TASKS)(w, d) || isHealthManager(w, d) },
};
/** A secret's setting or its parameter's: never passed through from the deployer's environment. */
const isSecret = (name: string): boolean => Object.keys(SECRETS).some((s) => name === `OTTAVA_${s}` || name === `OTTAVA_${s}_PARAMETER`);

// ─── IAM: the known grants on "*" ────────────────────────────────────────────────────────────────────
/**
 * Step Functions' log delivery (the flows' error logs): CloudWatch Logs takes "*" for these eight
 * actions (Create/Get/Update/DeleteLogDelivery, ListLogDeliveries, Put/DescribeResourcePolicies,
 * DescribeLogGroups). A pattern rather than the list stacks/flows.ts grants, so the test does not restate it.
 */
const LOG_DELIVERY_ON_STAR =
  /^logs:(?:(?:Create|Get|Update|Delete)LogDelivery|ListLogDeliveries|PutResourcePolicy|DescribeResourcePolicies|DescribeLogGroups)$/;
/** Actions whose only resource is "*": nothing narrower exists (besides the log delivery's, LOG_DELIVERY_ON_STAR). */
const ACTIONS_ON_STAR_ONLY = new Set([
  // ECS Exec's channels into the health manager's container (SST's task role).
  "ssmmessages:CreateControlChannel",
  "ssmmessages:CreateDataChannel",
  "ssmmessages:OpenControlChannel",
  "ssmmessages:OpenDataChannel",
  // The AWS drivers' and the orphan sweep's look-ups (stacks/iam.ts): EC2's Describe actions and
  // Secrets Manager's ListSecrets take no narrower resource.
  "ec2:DescribeAvailabilityZones",
  "ec2:DescribeImages",
  "ec2:DescribeInstanceTypes",
  "ec2:DescribeInstances",
  "ec2:DescribeNetworkInterfaces",
  "ec2:DescribePlacementGroups",
  "ec2:DescribeSecurityGroupRules",
  "ec2:DescribeSecurityGroups",
  "ec2:DescribeSubnets",
  "ec2:DescribeVpcs",
  "secretsmanager:ListSecrets",
  // X-Ray, should it be granted inline rather than by its managed policy.
  "xray:PutTraceSegments",
  "xray:PutTelemetryRecords",
]);
const XRAY_POLICY = "arn:aws:iam::aws:policy/AWSXRayDaemonWriteAccess";
/** AWS-managed policies SST or the stacks attach (their statements are AWS's, not in the synthesized policies). */
const MANAGED_POLICIES = new Set([
  // Each function's logs (AWS grants them on "*").
  "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
  // The container's image pull and logs.
  "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy",
  // X-Ray tracing of the functions and state machines (stacks/settings.ts): X-Ray's actions take no
  // resource narrower than "*", so AWS's policy for exactly them.
  XRAY_POLICY,
  // Functions in a VPC (the agent callers under the REST driver): their network interfaces, which EC2
  // grants on "*" only. SST attaches it to any function given a `vpc`.
  "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
]);

// ─── The configuration's settings, derived ───────────────────────────────────────────────────────────
/**
 * Every OTTAVA_* name loadConfig reads: run on an environment that records what it is asked for, under
 * each auth strategy (keystone reads the Keystone settings too); a setting it says must be set is given
 * a placeholder and the run repeated.
 */
function configSettings(): Set<string> {
  const read = new Set<string>();
  for (const strategy of ["noauth", "keystone"]) {
    const env: Record<string, string> = { OTTAVA_AUTH_STRATEGY: strategy };
    for (;;) {
      const recording = new Proxy(env, {
        get: (e, key) => {
          if (typeof key === "string" && key.startsWith("OTTAVA_")) read.add(key);
          return typeof key === "string" ? e[key] : undefined;
        },
      });
      try {
        loadConfig(recording);
        break;
      } catch (e) {
        const missing = /^(OTTAVA_\w+) must be set/.exec((e as Error).message)?.[1];
        if (!missing || env[missing] !== undefined) throw e;
        env[missing] = "placeholder";
      }
    }
  }
  return read;
}

/** The OTTAVA_* variables a workload's own source files read from process.env directly. */
function directReads(w: Workload): string[] {
  const names = new Set<string>();
  for (const file of w.sources) {
    for (const m of readFileSync(join(root, file), "utf8").matchAll(/process\.env(?:\.|\[["'])(OTTAVA_[A-Z0-9_]+)/g)) names.add(m[1]!);
  }
  return [...names];
}

const loadsConfig = (w: Workload) => w.sources.includes(CONFIG_MODULE);

// ─── The synthesized deployments ─────────────────────────────────────────────────────────────────────
interface Deployment {
  variant: Variant;
  synth: Synthesis;
  functions: Fn[];
  workloads: Workload[];
  /** The function behind the API's route. */
  api: Workload;
  functionArns: Map<string, Fn>;
}

const SETTINGS = configSettings();
/** Settings the full deploy leaves unset, each because stacks/config.ts refuses it beside the other one, which it sets. */
const REFUSED_BESIDE: Record<string, string> = {
  OTTAVA_AMP_BASE_IMAGE_ID: "OTTAVA_AMP_IMAGE_TAG", // the first-boot image is never booted while an image tag is set
};
/** A policy file, named as the README says (relative to the repository; SST copies it from there). */
const policyFile = ".sst/ottava-synth-policy.yaml";
/**
 * The deployer's environment of the deploy with every optional part: every setting that could be passed
 * set to a marker, the secrets' settings too (which must not be copied), and the values the stacks
 * interpret: Keystone auth, the AWS data plane (the REST, ec2 and vpc drivers) with a baked image (so none
 * of REFUSED_BESIDE), anti-affinity, ports, a policy file.
 */
const DEPLOYER_ENV: Record<string, string> = {
  ...Object.fromEntries(
    [...SETTINGS]
      .filter((n) => !LOCAL_ONLY.has(n) && !(n in SET_BY_STACKS) && !(n in REFUSED_BESIDE))
      .map((n) => [n, isSecret(n) ? `deployer-secret:${n}` : `deployer:${n}`]),
  ),
  OTTAVA_AUTH_STRATEGY: "keystone",
  OTTAVA_AMPHORA_DRIVER: "rest",
  OTTAVA_COMPUTE_DRIVER: "ec2",
  OTTAVA_NETWORK_DRIVER: "vpc",
  OTTAVA_ENABLE_ANTI_AFFINITY: "true",
  OTTAVA_AMPHORA_AGENT_PORT: "9444",
  OTTAVA_HEARTBEAT_PORT: "5556",
  OTTAVA_POLICY_FILE: policyFile,
  OTTAVA_CERT_MANAGER: "secretsmanager",
  OTTAVA_CERT_KMS_KEY_ARNS: CERT_KMS_KEY,
};
/** The settings passed through from the deployer's environment, with its values. */
const PASSED = Object.keys(DEPLOYER_ENV).filter((n) => SETTINGS.has(n) && !isSecret(n) && !(n in SET_BY_STACKS));

const VARIANTS: Record<string, Variant> = {
  // Every optional part, on a test stage: Keystone, the AWS data plane in the account with a baked image
  // (the agent callers in the VPC), every setting, a policy file, the CA key's passphrase.
  full: {
    stage: "synth",
    env: DEPLOYER_ENV,
    auth: "keystone",
    rest: true,
    production: false,
    passphrase: true,
    certificates: { kms: [CERT_KMS_KEY] },
    inAccount: { firstBoot: false },
  },
  // Trying the AWS data plane: the amphorae in the account on the stock image's first-boot path (a NAT
  // gateway), certificates nowhere, nothing else set.
  trial: {
    stage: "trial",
    env: {
      OTTAVA_AMPHORA_DRIVER: "rest",
      OTTAVA_COMPUTE_DRIVER: "ec2",
      OTTAVA_NETWORK_DRIVER: "vpc",
      OTTAVA_AMP_BASE_IMAGE_ID: "ami-0123456789abcdef0",
      OTTAVA_AMP_FLAVOR_ID: "t3.small",
    },
    auth: "keystone",
    rest: true,
    production: false,
    passphrase: true,
    certificates: undefined,
    inAccount: { firstBoot: true },
  },
  // The noauth opt-in of a private test stage, with the no-op amphora driver and nothing else set.
  noauth: {
    stage: "dev",
    env: { OTTAVA_AUTH_STRATEGY: "noauth", OTTAVA_INSECURE_NOAUTH_STAGE: "dev", OTTAVA_AMPHORA_MGMT_CIDR: "10.128.0.0/16" },
    auth: "noauth",
    rest: false,
    production: false,
    passphrase: true,
    certificates: undefined,
    inAccount: undefined,
  },
  // A production stage as an operator would set one up: keystone by default, the REST driver through a
  // peering connection, the operator's own alarm topic, certificates in Secrets Manager under the account's
  // key, a policy file, no optional setting, no passphrase.
  production: {
    stage: "production",
    env: {
      OTTAVA_AMPHORA_DRIVER: "rest",
      OTTAVA_AMPHORA_MGMT_CIDR: "192.168.0.0/16",
      OTTAVA_AMPHORA_MGMT_GATEWAY: "pcx-0123abcd",
      OTTAVA_ALARM_TOPIC: "arn:aws:sns:us-east-1:123456789012:ops",
      OTTAVA_CERT_MANAGER: "secretsmanager",
      // The policy file by its absolute path (the full deploy's is relative to the repository).
      OTTAVA_POLICY_FILE: join(root, policyFile),
      SST_SECRET_CaPrivateKeyPassphrase: "",
    },
    auth: "keystone",
    rest: true,
    production: true,
    passphrase: false,
    certificates: { kms: [] },
    inAccount: undefined,
  },
};

const deployments: Record<string, Deployment> = {};

beforeAll(async () => {
  mkdirSync(join(root, ".sst"), { recursive: true });
  writeFileSync(join(root, policyFile), '"load-balancer:read": "rule:admin_or_owner"\n');
  await Promise.all(
    Object.entries(VARIANTS).map(async ([name, variant]) => {
      deployments[name] = await deployment(variant, await synthesize(variant.env, variant.stage));
    }),
  );
}, 300_000);

async function deployment(variant: Variant, synth: Synthesis): Promise<Deployment> {
  const functions = synth.resources
    .filter((r) => r.type === "aws:lambda/function:Function")
    .map((r): Fn => {
      const build = synth.builds.find((b) => `${b.functionID}Function` === r.name);
      return {
        name: r.name,
        env: r.inputs.environment?.variables ?? {},
        containerSecrets: {},
        sources: ownSources(build?.inputs ?? []),
        resource: r,
      };
    });
  const containers = await Promise.all(
    synth.resources.filter((r) => r.type === "aws:ecs/taskDefinition:TaskDefinition").flatMap((td) => containerWorkloads(synth, td)),
  );
  const functionArns = new Map(functions.map((f) => [f.resource.state.arn as string, f]));
  const integration = synth.resources.find((r) => r.type === "aws:apigatewayv2/integration:Integration");
  const api = functionArns.get(integration?.inputs.integrationUri);
  if (!api) throw new Error("no function behind the API's integration");
  return { variant, synth, functions, workloads: [...functions, ...containers], api, functionArns };
}

/** Repository files only (no node_modules). */
const ownSources = (inputs: string[]) => inputs.filter((f) => !f.includes("node_modules/"));

/** The sources of each container entry's bundle (the same image in every deploy: bundled once). */
const entrySources = new Map<string, Promise<string[]>>();

/** A task definition's containers, each with the sources of its image's entry (the Dockerfile's CMD, bundled). */
function containerWorkloads(synth: Synthesis, td: SynthResource): Promise<Workload>[] {
  const image = synth.resources.find((r) => r.type === "docker-build:index:Image");
  const dockerfile = readFileSync(image!.inputs.dockerfile.location, "utf8");
  const entry = /^CMD \[.*"([^"]+\.ts)"\]\s*$/m.exec(dockerfile)?.[1];
  if (!entry) throw new Error(`${image!.inputs.dockerfile.location}: no CMD running a .ts entry`);
  if (!entrySources.has(entry)) {
    entrySources.set(
      entry,
      build({
        absWorkingDir: root,
        entryPoints: [entry],
        bundle: true,
        platform: "node",
        format: "esm",
        write: false,
        metafile: true,
        logLevel: "silent",
      }).then((b) => ownSources(Object.keys(b.metafile.inputs))),
    );
  }
  return (JSON.parse(td.inputs.containerDefinitions) as any[]).map(async (c): Promise<Workload> => ({
    name: c.name,
    env: Object.fromEntries((c.environment ?? []).map((e: { name: string; value: string }) => [e.name, e.value])),
    containerSecrets: Object.fromEntries((c.secrets ?? []).map((s: { name: string; valueFrom: string }) => [s.name, s.valueFrom])),
    sources: await entrySources.get(entry)!,
  }));
}

const ofType = (d: Deployment, type: string) => d.synth.resources.filter((r) => r.type === type);
const asList = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const roleByArn = (d: Deployment, arn: string) => {
  const role = ofType(d, "aws:iam/role:Role").find((r) => r.state.arn === arn);
  if (!role) throw new Error(`no role ${arn}`);
  return role;
};
/** The SSM parameter a function's OTTAVA_<NAME>_PARAMETER names ("name:version"). */
const parameterOf = (d: Deployment, reference: string) =>
  ofType(d, "aws:ssm/parameter:Parameter").find((p) => `${p.inputs.name}:${p.state.version}` === reference);
const stateMachines = (d: Deployment) => ofType(d, "aws:sfn/stateMachine:StateMachine");

describe("the AWS deployment, synthesized offline from sst.config.ts", () => {
  it("pins the SST it was written for", () => {
    const sst = JSON.parse(readFileSync(join(root, "node_modules", "sst", "package.json"), "utf8")).version;
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(pkg.devDependencies.sst).toBe(sst);
    for (const d of Object.values(deployments)) expect(d.synth.app.version).toBe(sst);
  });

  describe.each(Object.keys(VARIANTS))("%s", (name) => {
    let d: Deployment;
    beforeAll(() => {
      d = deployments[name]!;
    });

    it("ships the operator's policy file, named by an absolute path or one relative to the repository, in the API's bundle only", () => {
      const given = d.variant.env.OTTAVA_POLICY_FILE;
      // The synthesis ran SST's copyFiles, which reads the file where the deploy runs: a wrong path fails it.
      for (const f of d.functions)
        expect(f.env.OTTAVA_POLICY_FILE, f.name).toBe(given && f === d.api ? "/var/task/policy-overrides" : undefined);
    });

    it("builds every function's handler from a file that exists, exporting the handler", () => {
      const functions = ofType(d, "aws:lambda/function:Function");
      expect(functions.length).toBeGreaterThan(0);
      for (const fn of functions) {
        const build = d.synth.builds.find((b) => `${b.functionID}Function` === fn.name);
        expect(build, `${fn.name} was not built`).toBeDefined();
        expect(fn.inputs.handler).toBe(build!.handler);
        expect(fn.inputs.runtime).toBe(build!.runtime);
        expect(build!.exports, `${fn.name}: the bundle of ${build!.handler}`).toContain(
          build!.handler.slice(build!.handler.lastIndexOf(".") + 1),
        );
      }
      // Every workload's bundle holds code of this repository (the container's too).
      for (const w of d.workloads) expect(w.sources.length, w.name).toBeGreaterThan(0);
    });

    it("deploys one state machine per flow, each Task a declared function", () => {
      const { name: app, stage } = d.synth.app;
      expect(stage).toBe(d.variant.stage);
      expect(
        stateMachines(d)
          .map((m) => m.inputs.name)
          .sort(),
      ).toEqual(FLOW_NAMES.map((f) => `${app}-${stage}-${f}`).sort());
      for (const m of stateMachines(d)) {
        const tasks = taskStates(JSON.parse(m.inputs.definition).States);
        expect(tasks.length, m.name).toBeGreaterThan(0);
        for (const { Resource: arn } of tasks)
          expect(d.functionArns.has(arn), `${m.name}: Task Resource ${arn} is no declared function`).toBe(true);
      }
      // Every flow task has its function.
      const taskFunctions = d.workloads.filter((w) => w.env.OTTAVA_TASK !== undefined).map((w) => w.env.OTTAVA_TASK);
      expect([...taskFunctions].sort()).toEqual([...FLOW_TASKS].sort());
    });

    it("runs each flow's ASL, each Task calling its own task's function", () => {
      for (const flow of FLOW_NAMES) {
        const machine = stateMachines(d).find((m) => m.inputs.name === `${d.synth.app.name}-${d.synth.app.stage}-${flow}`)!;
        const deployed = JSON.parse(machine.inputs.definition, (key, value) =>
          key === "Resource" && d.functionArns.has(value) ? `task:${d.functionArns.get(value)!.env.OTTAVA_TASK}` : value,
        );
        expect(deployed, flow).toEqual(definitionOf(flow, (task) => `task:${task}`));
      }
    });

    it("ends each task's function before its Task state times out", () => {
      for (const m of stateMachines(d)) {
        for (const state of taskStates(JSON.parse(m.inputs.definition).States)) {
          const fn = d.functionArns.get(state.Resource)!.resource;
          const what = `${m.inputs.name}: ${fn.name}`;
          expect(state.TimeoutSeconds, `${what}: the Task's TimeoutSeconds`).toBeTypeOf("number");
          expect(fn.inputs.timeout, `${what}: the function's timeout`).toBeTypeOf("number");
          expect(fn.inputs.timeout, what).toBeLessThan(state.TimeoutSeconds!);
        }
      }
    });

    it("lets each flow's role invoke exactly the functions of its Tasks", () => {
      for (const m of stateMachines(d)) {
        const tasks = new Set(taskStates(JSON.parse(m.inputs.definition).States).map((s) => s.Resource));
        const role = roleByArn(d, m.inputs.roleArn);
        // AWS's own policies on a flow's role: X-Ray's alone (its traces).
        expect(
          managedPoliciesOf(d, role).filter((arn) => arn.startsWith("arn:aws:iam::aws:policy/")),
          `${m.name}: AWS-managed policies on its role`,
        ).toEqual([XRAY_POLICY]);
        const invokable = new Set(
          statementsOf(d, role)
            .filter(
              (s) => s.Effect === "Allow" && asList(s.Action).some((a) => a === "*" || a === "lambda:*" || a === "lambda:InvokeFunction"),
            )
            .flatMap((s) => asList(s.Resource)),
        );
        expect([...invokable].sort(), m.name).toEqual([...tasks].sort());
      }
    });

    it("routes the API to its function, which API Gateway may invoke; AWS_IAM authorization under noauth", () => {
      const gateway = ofType(d, "aws:apigatewayv2/api:Api");
      expect(gateway).toHaveLength(1);
      const routes = ofType(d, "aws:apigatewayv2/route:Route");
      expect(routes.map((r) => r.inputs.routeKey)).toEqual(["$default"]);
      const route = routes[0]!;
      expect(route.inputs.apiId).toBe(gateway[0]!.id);
      // keystone: the API authenticates every request itself; noauth: only requests signed with AWS credentials get to it.
      expect(route.inputs.authorizationType).toBe(d.variant.auth === "noauth" ? "AWS_IAM" : "NONE");
      const integration = ofType(d, "aws:apigatewayv2/integration:Integration").find((i) => route.inputs.target === `integrations/${i.id}`);
      expect(integration?.inputs).toMatchObject({ apiId: gateway[0]!.id, integrationType: "AWS_PROXY" });
      const fn = d.functionArns.get(integration!.inputs.integrationUri);
      expect(fn?.sources).toContain("packages/api/src/lambda.ts");
      expect(fn?.env.OTTAVA_AUTH_STRATEGY).toBe(d.variant.auth);
      const arn = integration!.inputs.integrationUri as string;
      const permission = ofType(d, "aws:lambda/permission:Permission").find(
        (p) =>
          [arn, fn!.resource.inputs.name].includes(p.inputs.function) &&
          p.inputs.principal === "apigateway.amazonaws.com" &&
          p.inputs.action === "lambda:InvokeFunction",
      );
      expect(permission, "API Gateway's permission to invoke the API function").toBeDefined();
      expect(permission!.inputs.sourceArn).toBe(`${gateway[0]!.state.executionArn}/*`);
    });

    it("gives each secret to the workloads that need it, as its parameter or as a plain setting, to no other", () => {
      for (const w of d.workloads) {
        const container = w.resource === undefined;
        for (const [setting, secret] of Object.entries(SECRETS)) {
          const name = `OTTAVA_${setting}`;
          const got = [
            ...(w.env[name] !== undefined ? [`environment ${name}`] : []),
            ...(w.env[`${name}_PARAMETER`] !== undefined ? [`environment ${name}_PARAMETER`] : []),
            ...(w.containerSecrets[name] !== undefined ? [`secrets ${name}`] : []),
          ];
          const way = !secret.stored ? `environment ${name}` : container ? `secrets ${name}` : `environment ${name}_PARAMETER`;
          expect(got, `${w.name}: ${name}`).toEqual(secret.to(w, d) ? [way] : []);
          if (!secret.to(w, d)) continue;
          // What it gets is the SST secret of that name: its value, or its parameter (at its current version), holding it.
          const value = !secret.stored
            ? w.env[name]
            : container
              ? ofType(d, "aws:ssm/parameter:Parameter").find((p) => p.state.arn === w.containerSecrets[name])?.inputs.value
              : parameterOf(d, w.env[`${name}_PARAMETER`]!)?.inputs.value;
          expect(value, `${w.name}: ${name}`).toBe(`synth-secret:${secret.sst}`);
        }
        // Anything else from an SST secret: only the CA certificate, as the CA the REST driver checks agents with.
        for (const [name, value] of Object.entries(w.env)) {
          if (!value.startsWith("synth-secret:") || isSecret(name)) continue;
          expect([name, value], w.name).toEqual(["OTTAVA_SERVER_CA", "synth-secret:CaCertificate"]);
        }
      }
      // SECRET_SETTINGS are the stored ones: a new secret setting needs its line above.
      expect(
        Object.keys(SECRETS)
          .filter((s) => SECRETS[s]!.stored)
          .sort(),
      ).toEqual([...SECRET_SETTINGS].sort());
    });

    it("keeps each secret in one SSM SecureString, under the stage's key, and its value nowhere else", () => {
      const keys = ofType(d, "aws:kms/key:Key");
      expect(keys).toHaveLength(1);
      const parameters = ofType(d, "aws:ssm/parameter:Parameter");
      const referenced = new Set([
        ...d.functions.flatMap((f) =>
          Object.entries(f.env)
            .filter(([n]) => n.endsWith("_PARAMETER"))
            .map(([, ref]) => parameterOf(d, ref)?.state.arn),
        ),
        ...d.workloads.flatMap((w) => Object.values(w.containerSecrets)),
      ]);
      // Every parameter is some workload's; every reference is a parameter.
      expect([...referenced].sort()).toEqual(parameters.map((p) => p.state.arn).sort());
      for (const p of parameters) {
        expect(p.inputs, p.name).toMatchObject({ type: "SecureString", keyId: keys[0]!.state.arn });
        expect(p.inputs.name, p.name).toMatch(new RegExp(`^/${d.synth.app.name}/${d.variant.stage}/`));
      }
      const everything = d.synth.resources.map((r) => ({ what: `${r.type} ${r.name}`, json: JSON.stringify(r.inputs) }));
      // What is deployed: SST's own components (sst:*) are not, their inputs live in the stage's state only
      // (sst.Secret's link keeps its value there, encrypted).
      const deployed = everything.filter((r) => !r.what.startsWith("sst:") && !r.what.startsWith("pulumi:"));
      for (const secret of Object.values(SECRETS).filter((s) => s.stored)) {
        const holders = deployed.filter((r) => r.json.includes(JSON.stringify(`synth-secret:${secret.sst}`)));
        expect(
          holders.map((r) => r.what),
          secret.sst,
        ).toEqual(holders.length ? [`aws:ssm/parameter:Parameter ${secret.sst}Parameter`] : []);
      }
      // Nothing is copied from the deployer's secret settings.
      expect(everything.filter((r) => r.json.includes("deployer-secret:")).map((r) => r.what)).toEqual([]);
    });

    it("lets each workload read exactly its own parameters, and decrypt them only through SSM", () => {
      const key = ofType(d, "aws:kms/key:Key")[0]!;
      const wanted = new Map<string, string[]>(); // role ARN → parameter ARNs
      const want = (role: string, arns: string[]) => wanted.set(role, [...(wanted.get(role) ?? []), ...arns]);
      for (const f of d.functions) {
        want(
          f.resource.inputs.role,
          Object.entries(f.env)
            .filter(([n]) => n.endsWith("_PARAMETER"))
            .map(([, ref]) => parameterOf(d, ref)!.state.arn),
        );
      }
      // A container's secrets are read by its execution role, when ECS starts the task.
      for (const td of ofType(d, "aws:ecs/taskDefinition:TaskDefinition")) {
        const secrets = (JSON.parse(td.inputs.containerDefinitions) as { secrets?: { valueFrom: string }[] }[]).flatMap(
          (c) => c.secrets ?? [],
        );
        want(
          td.inputs.executionRoleArn,
          secrets.map((s) => s.valueFrom),
        );
      }
      for (const role of ofType(d, "aws:iam/role:Role")) {
        const allowed = statementsOf(d, role).filter((s) => s.Effect === "Allow");
        const ssm = allowed.filter((s) => asList(s.Action).some((a) => a.startsWith("ssm:")));
        for (const s of ssm)
          expect(
            asList(s.Action).every((a) => a === "ssm:GetParameter" || a === "ssm:GetParameters"),
            `${role.name}: ${JSON.stringify(s)}`,
          ).toBe(true);
        const reads = ssm.flatMap((s) => asList(s.Resource));
        expect(reads.sort(), `${role.name} reads`).toEqual([...(wanted.get(role.state.arn) ?? [])].sort());
        // (Decrypting certificate secrets through Secrets Manager is the next test's.)
        const decrypts = allowed.filter((s) => asList(s.Action).some((a) => a.startsWith("kms:")) && !isCertificateDecrypt(s));
        expect(decrypts.length > 0, `${role.name} decrypts`).toBe(reads.length > 0);
        for (const s of decrypts) {
          expect({ Action: asList(s.Action), Resource: asList(s.Resource), Condition: s.Condition }, role.name).toEqual({
            Action: ["kms:Decrypt"],
            Resource: [key.state.arn],
            Condition: { StringEquals: { "kms:ViaService": `ssm.${REGION}.amazonaws.com` } },
          });
        }
      }
    });

    it("gives the amphorae an instance role that reads only the secret tagged with the calling instance's ARN, and nothing else", () => {
      const profiles = ofType(d, "aws:iam/instanceProfile:InstanceProfile");
      expect(profiles).toHaveLength(1);
      const profile = profiles[0]!;
      expect(profile.state.name).toBe(`ottava-${d.variant.stage}-amphora`);
      const role = ofType(d, "aws:iam/role:Role").find((r) => isRole(r, profile.inputs.role))!;
      expect(JSON.parse(role.inputs.assumeRolePolicy).Statement).toEqual([
        { Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" },
      ]);
      expect(managedPoliciesOf(d, role)).toEqual([]);
      expect(statementsOf(d, role)).toEqual([
        {
          Effect: "Allow",
          Action: "secretsmanager:GetSecretValue",
          Resource: `arn:aws:secretsmanager:${REGION}:123456789012:secret:ottava/${d.variant.stage}/amphora/*`,
          Condition: { StringEquals: { "secretsmanager:ResourceTag/ottava:instance-arn": "${ec2:SourceInstanceARN}" } },
        },
      ]);
      // What the amphora's configure step was recorded calling (User-Agent ottava/amphora, on the test bed): its own secret, no EC2 (a VRRP promotion goes over the heartbeats, docs/data-plane.md).
      expect(readAwsCallRecord().amphora).toEqual(["secretsmanager:GetSecretValue"]);
      // The task functions that launch amphorae launch them with it.
      for (const f of d.functions.filter((f) => isTask(COMPUTE_TASKS)(f, d)))
        expect(f.env.OTTAVA_AMP_INSTANCE_PROFILE, f.name).toBe(profile.state.name);
    });

    it("grants each workload exactly the EC2 and Secrets Manager actions it was recorded calling on the test bed (test/fixtures/aws-calls.json), and those stacks/iam-calls.ts lists as unrecorded", () => {
      const drivers = d.variant.env.OTTAVA_COMPUTE_DRIVER === "ec2" && d.variant.env.OTTAVA_NETWORK_DRIVER === "vpc";
      const record = readAwsCallRecord();
      const certificateReader = (w: Workload) =>
        d.variant.certificates !== undefined && (w === d.api || (d.variant.rest && isTask(CERT_TASKS)(w, d)));
      const CALLED = /^(ec2|secretsmanager):|^iam:PassRole$/;
      const roles = workloadRoles(d);
      expect(roles.map((r) => r.workload).sort()).toEqual(expect.arrayContaining(["api", HEALTH_MANAGER, SWEEP, ...FLOW_TASKS].sort()));
      for (const { workload, role, w } of roles) {
        const granted = new Set(
          statementsOf(d, role)
            .filter((s) => s.Effect === "Allow")
            .flatMap((s) => asList(s.Action).filter((a) => CALLED.test(a))),
        );
        // What it calls: recorded, plus the unrecorded paths' calls; certificate reads where stacks/certificates.ts grants them.
        const unrecorded = UNRECORDED_CALLS.filter((u) => u.workload === workload).map((u) => u.calls);
        const calls = new Set<string>([
          ...(drivers ? [...(record[workload] ?? []), ...unrecorded.flatMap((c) => [...(c.ec2 ?? []), ...(c.vpc ?? [])])] : []),
          ...(certificateReader(w) ? ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"] : []),
        ]);
        // A recorded certificate read is the certificate manager's (granted by stacks/certificates.ts only with it).
        if (!certificateReader(w)) for (const a of ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"]) calls.delete(a);
        const implied = [...calls].flatMap((a) => IMPLIED[a] ?? []);
        expect([...granted].sort(), workload).toEqual([...new Set([...calls, ...implied])].sort());
      }
      // Every recorded workload is a role of the deploy (the amphora's is its instance role, checked below).
      if (drivers)
        for (const workload of Object.keys(record).filter((w) => w !== "amphora"))
          expect(
            roles.map((r) => r.workload),
            workload,
          ).toContain(workload);
      // stacks/iam-calls.ts's table is the record, to the action.
      expect(
        Object.fromEntries(Object.entries(WORKLOAD_CALLS).map(([w, c]) => [w, [...new Set([...(c.ec2 ?? []), ...(c.vpc ?? [])])].sort()])),
      ).toEqual(
        Object.fromEntries(
          Object.entries(record)
            .filter(([w]) => w !== "amphora")
            .map(([w, a]) => [w, a.filter((x) => !/^secretsmanager:(DescribeSecret|GetSecretValue)$/.test(x))] as const)
            .filter(([, a]) => a.length > 0),
        ),
      );
    });

    it("conditions creation on the request's stage tag and changes and deletion on the resource's, and lists every statement that cannot be", () => {
      const stage = d.variant.stage;
      const ec2 = (resource: string) => `arn:aws:ec2:${REGION}:123456789012:${resource}`;
      const secrets = `arn:aws:secretsmanager:${REGION}:123456789012:secret:ottava/${stage}/amphora/*`;
      const groups = ec2(`placement-group/ottava-${stage}-lb-*`);
      const CREATES = /^ec2:(RunInstances|CreateNetworkInterface|CreateSecurityGroup|CreatePlacementGroup)$|^secretsmanager:CreateSecret$/;
      const CHANGES =
        /^ec2:(TerminateInstances|AttachNetworkInterface|DetachNetworkInterface|DeleteNetworkInterface|DeleteSecurityGroup|DeletePlacementGroup|AssignPrivateIpAddresses|UnassignPrivateIpAddresses|ModifyNetworkInterfaceAttribute|AuthorizeSecurityGroupIngress|RevokeSecurityGroupIngress)$|^secretsmanager:(PutSecretValue|DeleteSecret)$/;
      /** The statements without a stage condition, and why (stacks/iam.ts): what they name is not Ottava's to tag. */
      const UNCONDITIONED: Record<string, string[]> = {
        // The launch's subnet, groups and image are the operator's; its ENI is made by the launch; the group is the stage's by name.
        "ec2:RunInstances": [
          ec2("network-interface/*"),
          ec2("subnet/*"),
          ec2("security-group/*"),
          groups,
          `arn:aws:ec2:${REGION}::image/*`,
        ],
        // The subnet and groups an ENI is made in and with are the operator's.
        "ec2:CreateNetworkInterface": [ec2("subnet/*"), ec2("security-group/*")],
        // The VPC a group is made in is the operator's.
        "ec2:CreateSecurityGroup": [ec2("vpc/*")],
        // The groups a VIP port is given (vip_sg_ids) are the operator's.
        "ec2:ModifyNetworkInterfaceAttribute": [ec2("security-group/*")],
        // CreateSecret's Tags are authorized on a secret not yet made, and the binding tag carries no stage tag.
        "secretsmanager:TagResource": [secrets],
      };
      const stageCondition = (s: Statement, key: string) => s.Condition?.StringEquals?.[`${key}/ottava:stage`] === stage;
      let checked = 0;
      for (const { workload, role } of workloadRoles(d)) {
        for (const s of statementsOf(d, role).filter((s) => s.Effect === "Allow")) {
          const what = `${workload}: ${JSON.stringify(s)}`;
          for (const a of asList(s.Action)) {
            if (!CREATES.test(a) && !CHANGES.test(a) && a !== "secretsmanager:TagResource") continue;
            checked++;
            if (stageCondition(s, CREATES.test(a) ? "aws:RequestTag" : "aws:ResourceTag")) continue;
            // A user's port given as vip_port_id: the VIP's addresses on it, when it carries a project's tag.
            if (/^ec2:(Assign|Unassign)PrivateIpAddresses$/.test(a) && s.Condition?.Null?.["aws:ResourceTag/ottava:project"] === "false") {
              expect(asList(s.Resource), what).toEqual([ec2("network-interface/*")]);
              continue;
            }
            expect(UNCONDITIONED[a], what).toBeDefined();
            expect(UNCONDITIONED[a], what).toEqual(expect.arrayContaining(asList(s.Resource)));
          }
          // Tagging only in a creating call, with the stage's tag; passing the amphora role only to EC2.
          if (asList(s.Action).includes("ec2:CreateTags")) {
            expect(asList(s.Condition?.StringEquals?.["ec2:CreateAction"]).length, what).toBeGreaterThan(0);
            expect(stageCondition(s, "aws:RequestTag"), what).toBe(true);
          }
          if (asList(s.Action).includes("iam:PassRole"))
            expect(s.Condition, what).toEqual({ StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } });
          // The amphorae's secrets only, by name; EC2 resources of this account and Region.
          for (const a of asList(s.Action).filter((a) => /^secretsmanager:(?!DescribeSecret$|GetSecretValue$|ListSecrets$)/.test(a)))
            expect(asList(s.Resource), what).toEqual([secrets]);
        }
      }
      const drivers = d.variant.env.OTTAVA_COMPUTE_DRIVER === "ec2";
      expect(checked > 0, "statements checked").toBe(drivers);
    });

    it("grants each workload the DynamoDB actions its bundle's commands call, on the table and its indexes only (no dynamodb:*)", () => {
      const table = ofType(d, "aws:dynamodb/table:Table")[0]!;
      for (const { workload, role, sources } of workloadRoles(d)) {
        const granted = statementsOf(d, role).filter(
          (s) => s.Effect === "Allow" && asList(s.Action).some((a) => a.startsWith("dynamodb:")),
        );
        const called = dynamoActionsOf(sources);
        expect(called.length, `${workload} calls DynamoDB`).toBeGreaterThan(0);
        expect(
          granted.map((s) => ({ Action: asList(s.Action).sort(), Resource: asList(s.Resource) })),
          workload,
        ).toEqual([{ Action: called, Resource: [table.state.arn, `${table.state.arn}/index/*`] }]);
      }
    });

    it("creates the events' bus, names it in the outputs, and lets only the notifying tasks put events, on that bus only", () => {
      const buses = ofType(d, "aws:cloudwatch/eventBus:EventBus");
      expect(buses.map((b) => b.inputs.name)).toEqual([`${d.synth.app.name}-${d.variant.stage}-events`]);
      const bus = buses[0]!;
      expect(d.synth.outputs.eventBus).toBe(bus.inputs.name);
      const notifying = d.functions.filter((f) => isTask(NOTIFYING_TASKS)(f, d));
      expect(notifying.map((f) => f.env.OTTAVA_TASK).sort()).toEqual([...NOTIFYING_TASKS].sort());
      for (const role of ofType(d, "aws:iam/role:Role")) {
        const events = statementsOf(d, role)
          .filter((s) => asList(s.Action).some((a) => a.startsWith("events:") || a === "*"))
          .map((s) => ({ Effect: s.Effect, Action: asList(s.Action), Resource: asList(s.Resource) }));
        const fn = notifying.find((f) => roleByArn(d, f.resource.inputs.role) === role);
        expect(events, role.name).toEqual(fn ? [{ Effect: "Allow", Action: ["events:PutEvents"], Resource: [bus.state.arn] }] : []);
        if (fn) expect(fn.env.OTTAVA_EVENT_BUS_NAME, fn.name).toBe(bus.inputs.name);
      }
    });

    it("lets the API, and with the REST driver the tasks that push the listeners' configuration, read the stage's certificate secrets, and decrypt them through Secrets Manager with the operator's keys", () => {
      const certificates = d.variant.certificates;
      const readers = d.functions.filter((f) => f === d.api || (d.variant.rest && isTask(CERT_TASKS)(f, d)));
      if (certificates) expect(readers.length).toBe(1 + (d.variant.rest ? CERT_TASKS.length : 0));
      const CERTS = /^secretsmanager:(DescribeSecret|GetSecretValue)$/;
      for (const w of d.functions) {
        const allowed = statementsOf(d, roleByArn(d, w.resource.inputs.role)).filter((s) => s.Effect === "Allow");
        const granted = allowed
          .filter((s) => asList(s.Action).some((a) => CERTS.test(a)) || isCertificateDecrypt(s))
          .map((s) => ({ Action: asList(s.Action).sort(), Resource: asList(s.Resource), Condition: s.Condition }));
        if (!certificates || !readers.includes(w)) {
          expect(granted, `${w.name} reads no certificate`).toEqual([]);
          continue;
        }
        expect(w.env.OTTAVA_CERT_MANAGER, w.name).toBe("secretsmanager");
        expect(granted, w.name).toEqual([
          {
            Action: ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"],
            Resource: [`arn:aws:secretsmanager:${REGION}:123456789012:secret:*`],
            Condition: {
              StringEquals: {
                "secretsmanager:ResourceTag/ottava:certificate": "true",
                "secretsmanager:ResourceTag/ottava:stage": d.variant.stage,
              },
            },
          },
          ...(certificates.kms.length > 0
            ? [
                {
                  Action: ["kms:Decrypt"],
                  Resource: certificates.kms,
                  Condition: { StringEquals: { "kms:ViaService": `secretsmanager.${REGION}.amazonaws.com` } },
                },
              ]
            : []),
        ]);
      }
    });

    it("creates the table packages/db/src/table.ts defines, protected from deletion on production only", async () => {
      const defined = await tableDefinition();
      const create = defined.CreateTableCommand;
      const tables = ofType(d, "aws:dynamodb/table:Table");
      expect(tables).toHaveLength(1);
      const t = tables[0]!.inputs;
      const keyOf = (schema: { AttributeName: string; KeyType: string }[], type: string) =>
        schema.find((k) => k.KeyType === type)?.AttributeName;
      expect({ hashKey: t.hashKey, rangeKey: t.rangeKey }).toEqual({
        hashKey: keyOf(create.KeySchema, "HASH"),
        rangeKey: keyOf(create.KeySchema, "RANGE"),
      });
      expect(sortBy(t.attributes, "name")).toEqual(
        sortBy(
          create.AttributeDefinitions.map((a: any) => ({ name: a.AttributeName, type: a.AttributeType })),
          "name",
        ),
      );
      const gsi = (g: any) => ({
        name: g.name,
        hashKey: g.hashKey,
        rangeKey: g.rangeKey,
        projectionType: g.projectionType,
        nonKeyAttributes: g.nonKeyAttributes ?? [],
      });
      expect(sortBy(t.globalSecondaryIndexes.map(gsi), "name")).toEqual(
        sortBy(
          create.GlobalSecondaryIndexes.map((g: any) => ({
            name: g.IndexName,
            hashKey: keyOf(g.KeySchema, "HASH"),
            rangeKey: keyOf(g.KeySchema, "RANGE"),
            projectionType: g.Projection.ProjectionType,
            nonKeyAttributes: g.Projection.NonKeyAttributes ?? [],
          })),
          "name",
        ),
      );
      expect(t.localSecondaryIndexes ?? []).toEqual([]);
      expect(t.billingMode).toBe(create.BillingMode);
      expect(t.ttl).toEqual({ attributeName: defined.UpdateTimeToLiveCommand.TimeToLiveSpecification.AttributeName, enabled: true });
      expect(t.pointInTimeRecovery?.enabled).toBe(
        defined.UpdateContinuousBackupsCommand.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled,
      );
      expect(t.deletionProtectionEnabled, "deletion protection").toBe(d.variant.production);
    });

    it("grants no * action, and * resources only to the actions that take nothing narrower", () => {
      const check = (where: string, statements: Statement[]) => {
        for (const s of statements) {
          if (s.Effect !== "Allow") continue;
          const what = `${where}: ${JSON.stringify(s)}`;
          expect(s.NotAction ?? s.NotResource, what).toBeUndefined();
          expect(asList(s.Action), what).not.toContain("*");
          if (asList(s.Resource).includes("*"))
            for (const a of asList(s.Action))
              expect(ACTIONS_ON_STAR_ONLY.has(a) || LOG_DELIVERY_ON_STAR.test(a), `${what}: ${a} on *`).toBe(true);
        }
      };
      for (const role of ofType(d, "aws:iam/role:Role")) {
        for (const arn of managedPoliciesOf(d, role)) {
          // AWS's own policies: only the known ones. Any other must be one of ours, checked with the role.
          if (arn.startsWith("arn:aws:iam::aws:policy/"))
            expect(MANAGED_POLICIES.has(arn), `${role.name}: managed policy ${arn}`).toBe(true);
          else
            expect(
              ofType(d, "aws:iam/policy:Policy").some((p) => p.state.arn === arn),
              `${role.name}: ${arn} is declared`,
            ).toBe(true);
        }
        check(role.name, statementsOf(d, role));
      }
      for (const type of ["aws:iam/policy:Policy", "aws:iam/userPolicy:UserPolicy", "aws:iam/groupPolicy:GroupPolicy"]) {
        for (const p of ofType(d, type)) check(p.name, asList(JSON.parse(p.inputs.policy).Statement));
      }
    });

    it("traces every function and state machine with X-Ray, and keeps every log a month", () => {
      for (const f of d.functions) {
        expect(f.resource.inputs.tracingConfig, f.name).toEqual({ mode: "Active" });
        expect(managedPoliciesOf(d, roleByArn(d, f.resource.inputs.role)), f.name).toContain(XRAY_POLICY);
      }
      for (const m of stateMachines(d)) {
        expect(m.inputs.tracingConfiguration, m.name).toEqual({ enabled: true });
        expect(managedPoliciesOf(d, roleByArn(d, m.inputs.roleArn)), m.name).toContain(XRAY_POLICY);
      }
      const groups = ofType(d, "aws:cloudwatch/logGroup:LogGroup");
      for (const g of groups) expect(g.inputs.retentionInDays, g.name).toBe(LOG_RETENTION_DAYS);
      // Everything logs into one of those groups: the functions, the flows, the container.
      const names = new Set(groups.map((g) => g.inputs.name));
      for (const f of d.functions) expect(names.has(f.resource.inputs.loggingConfig?.logGroup), `${f.name}'s log group`).toBe(true);
      for (const m of stateMachines(d))
        expect(
          groups.some((g) => m.inputs.loggingConfiguration?.logDestination === `${g.state.arn}:*`),
          `${m.name}'s log group`,
        ).toBe(true);
      for (const group of containerLogGroups(d)) expect(names.has(group), group).toBe(true);
    });

    it("alarms on every flow's failures and time-outs, API 5xx, every function's throttles, dead letters and failover storms, to the alarm topic", async () => {
      const topics = ofType(d, "aws:sns/topic:Topic");
      // The operator's topic (OTTAVA_ALARM_TOPIC), or else one of the stage's own.
      const topic = d.variant.env.OTTAVA_ALARM_TOPIC ?? topics[0]?.state.arn;
      expect(topics).toHaveLength(d.variant.env.OTTAVA_ALARM_TOPIC ? 0 : 1);
      const alarms = ofType(d, "aws:cloudwatch/metricAlarm:MetricAlarm");
      for (const a of alarms)
        expect({ alarm: a.inputs.alarmActions, ok: a.inputs.okActions }, a.name).toEqual({ alarm: [topic], ok: [topic] });

      const watched = (a: SynthResource) => ({
        namespace: a.inputs.namespace,
        metricName: a.inputs.metricName,
        dimensions: a.inputs.dimensions ?? {},
      });
      const queues = ofType(d, "aws:sqs/queue:Queue");
      expect(queues).toHaveLength(1); // the jobs' dead-letter queue
      const filters = ofType(d, "aws:cloudwatch/logMetricFilter:LogMetricFilter");
      expect(filters).toHaveLength(4); // the failover storms', the orphan sweep's, the two boot waits'
      const filter = filters.find((f) => f.name === "FailoverStormAlerts")!.inputs;
      const orphans = filters.find((f) => f.name === "OrphansSwept")!.inputs;
      const expected = [
        ...stateMachines(d).flatMap((m) =>
          ["ExecutionsFailed", "ExecutionsTimedOut"].map((metricName) => ({
            namespace: "AWS/States",
            metricName,
            dimensions: { StateMachineArn: m.state.arn },
          })),
        ),
        { namespace: "AWS/ApiGateway", metricName: "5xx", dimensions: { ApiId: ofType(d, "aws:apigatewayv2/api:Api")[0]!.id } },
        ...d.functions.map((f) => ({
          namespace: "AWS/Lambda",
          metricName: "Throttles",
          dimensions: { FunctionName: f.resource.inputs.name },
        })),
        { namespace: "AWS/SQS", metricName: "ApproximateAgeOfOldestMessage", dimensions: { QueueName: queues[0]!.state.name } },
        { namespace: filter.metricTransformation.namespace, metricName: filter.metricTransformation.name, dimensions: {} },
        { namespace: orphans.metricTransformation.namespace, metricName: orphans.metricTransformation.name, dimensions: {} },
        { namespace: "Ottava", metricName: "AmphoraBootFailureAlerts", dimensions: {} },
      ];
      expect(alarms.map((a) => JSON.stringify(watched(a))).sort()).toEqual(expected.map((w) => JSON.stringify(w)).sort());
      // One period is enough, but for a job's throttles: an overlap with its previous run throttles it
      // once (reserved concurrency 1, the way it waits its turn); only JOB_THROTTLE_PERIODS periods running alarm.
      for (const a of alarms) {
        const fn = d.functions.find((f) => f.resource.inputs.name === a.inputs.dimensions?.FunctionName);
        const job = fn?.resource.inputs.handler.startsWith("packages/controller/src/jobs/") ?? false;
        const periods = job && a.inputs.metricName === "Throttles" ? JOB_THROTTLE_PERIODS : 1;
        expect({ evaluationPeriods: a.inputs.evaluationPeriods, datapointsToAlarm: a.inputs.datapointsToAlarm }, a.name).toEqual({
          evaluationPeriods: periods,
          datapointsToAlarm: periods,
        });
      }
      expect(alarms.filter((a) => a.inputs.evaluationPeriods === JOB_THROTTLE_PERIODS).length).toBeGreaterThan(0);
      for (const w of expected)
        expect(
          Object.values(w.dimensions).every((v) => typeof v === "string" && v !== ""),
          JSON.stringify(w),
        ).toBe(true);

      // The failover storms' filter reads the health manager's log, and counts the very line the health
      // check writes when it stops failovers, and no other.
      expect(containerLogGroups(d)).toContain(filter.logGroupName);
      const lines = await failoverStormLog();
      const matches = lines.filter(jsonFilter(filter.pattern));
      expect(matches, `${filter.pattern} in:\n${lines.join("\n")}`).toHaveLength(1);
      expect(JSON.parse(matches[0]!)).toMatchObject({ level: "ERROR", service: "ottava-health" });

      // The orphan sweep's filter reads the sweep job's log, and counts the line it writes for each
      // resource it removes, and no other.
      const sweepJob = d.functions.find((f) => f.resource.inputs.handler === "packages/controller/src/jobs/lambda.sweepHandler")!;
      expect(orphans.logGroupName).toBe(sweepJob.resource.inputs.loggingConfig.logGroup);
      const swept = await orphanSweepLog();
      const orphanLines = swept.filter(jsonFilter(orphans.pattern));
      expect(orphanLines, `${orphans.pattern} in:\n${swept.join("\n")}`).toHaveLength(2);
      for (const line of orphanLines) expect(JSON.parse(line)).toMatchObject({ level: "WARN", message: "orphaned cloud resource removed" });

      // Amphorae that failed to boot: the logs of the two tasks that wait for a build, their line when they
      // give up (packages/controller/test/rest-wait.test.ts shows it written), into one metric.
      const boot = filters.filter((f) => f.name.startsWith("AmphoraBootFailures"));
      const waits = d.functions.filter((f) => ["computeWait", "amphoraeConnectivityWait"].includes(f.env.OTTAVA_TASK ?? ""));
      expect(boot.map((f) => f.inputs.logGroupName).sort()).toEqual(waits.map((f) => f.resource.inputs.loggingConfig.logGroup).sort());
      for (const f of boot) {
        expect(f.inputs.pattern).toBe(`{ $.alert = "${AMPHORA_BOOT_FAILED_ALERT}" }`);
        expect(f.inputs.metricTransformation).toMatchObject({ namespace: "Ottava", name: "AmphoraBootFailureAlerts", value: "1" });
      }
    });

    it("runs each job one at a time, its failed runs and undelivered events in the dead-letter queue", () => {
      const dlq = ofType(d, "aws:sqs/queue:Queue")[0]!;
      const jobs = d.functions.filter((f) => f.resource.inputs.handler.startsWith("packages/controller/src/jobs/"));
      expect(jobs.length).toBeGreaterThan(0);
      const schedules = ofType(d, "aws:scheduler/schedule:Schedule");
      expect(schedules.map((s) => d.functionArns.get(s.inputs.target.arn)?.name).sort()).toEqual(jobs.map((j) => j.name).sort());
      for (const schedule of schedules) {
        // What the scheduler cannot deliver, it sends to the queue, as its role.
        expect(schedule.inputs.target.deadLetterConfig?.arn, schedule.name).toBe(dlq.state.arn);
        expect(
          allows(d, roleByArn(d, schedule.inputs.target.roleArn), "sqs:SendMessage", dlq.state.arn),
          `${schedule.name}'s role sends dead letters`,
        ).toBe(true);
      }
      for (const job of jobs) {
        expect(job.resource.inputs.reservedConcurrentExecutions, job.name).toBe(1);
        // A run that fails after Lambda's retries goes to the queue, sent as the function's role.
        const invokeConfigs = ofType(d, "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig").filter(
          (c) => c.inputs.functionName === job.resource.inputs.name,
        );
        expect(
          invokeConfigs.map((c) => c.inputs.destinationConfig?.onFailure?.destination),
          job.name,
        ).toEqual([dlq.state.arn]);
        expect(allows(d, roleByArn(d, job.resource.inputs.role), "sqs:SendMessage", dlq.state.arn), `${job.name} sends dead letters`).toBe(
          true,
        );
      }
    });

    it("admits heartbeats from the management network; with the REST driver, the agent callers run in the VPC, routed to it", () => {
      const inAccount = d.variant.inAccount;
      // In the account, the management network is the stacks' own subnets (stacks/config.ts); else the operator's.
      const mgmt = inAccount ? AMPHORA_SUBNETS_CIDR : d.variant.env.OTTAVA_AMPHORA_MGMT_CIDR!;
      const port = Number(d.variant.env.OTTAVA_HEARTBEAT_PORT ?? 5555);
      const groups = [
        ...ofType(d, "aws:ec2/securityGroup:SecurityGroup"),
        ...ofType(d, "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"),
      ];
      const group = (id: string) => groups.find((g) => g.id === id)!;
      const service = ofType(d, "aws:ecs/service:Service")[0]!;
      const ingress = asList<string>(service.inputs.networkConfiguration.securityGroups).flatMap((id) =>
        asList<any>(group(id).inputs.ingress),
      );
      expect(
        ingress.some((r) => r.protocol === "udp" && r.fromPort === port && r.toPort === port && asList(r.cidrBlocks).includes(mgmt)),
        "heartbeat ingress",
      ).toBe(true);

      const inVpc = d.functions.filter((f) => f.resource.inputs.vpcConfig !== undefined);
      expect(inVpc.map((f) => f.env.OTTAVA_TASK).sort()).toEqual(d.variant.rest ? [...AGENT_TASKS].sort() : []);
      const routes = ofType(d, "aws:ec2/routeTable:RouteTable").flatMap((t) =>
        asList<any>(t.inputs.routes).map((r) => ({ table: t.id, ...r })),
      );
      const tableOf = (subnet: string) =>
        ofType(d, "aws:ec2/routeTableAssociation:RouteTableAssociation").find((a) => a.inputs.subnetId === subnet)?.inputs.routeTableId;
      const gateway = d.variant.env.OTTAVA_AMPHORA_MGMT_GATEWAY;
      // In the account nothing routes the management network: it is the VPC's own (its local route).
      if (inAccount) expect(routes.filter((r) => r.cidrBlock === mgmt)).toEqual([]);
      expect(
        routes.filter((r) => r.cidrBlock === mgmt).every((r) => Object.values(r).includes(gateway)),
        "routes to the management network go through its gateway",
      ).toBe(true);
      const agentPort = Number(d.variant.env.OTTAVA_AMPHORA_AGENT_PORT ?? 9443);
      for (const f of inVpc) {
        // Each subnet it runs in routes the external management network through the gateway.
        for (const subnet of f.resource.inputs.vpcConfig.subnetIds as string[]) {
          if (inAccount) continue;
          expect(
            routes.some((r) => r.table === tableOf(subnet) && r.cidrBlock === mgmt),
            `${f.name}: ${subnet} routes ${mgmt}`,
          ).toBe(true);
        }
        // Its security groups reach the agents' port there, and AWS's APIs (HTTPS) inside the VPC only.
        const egress = asList<string>(f.resource.inputs.vpcConfig.securityGroupIds).flatMap((id) => asList<any>(group(id).inputs.egress));
        expect(
          egress.some(
            (r) => r.protocol === "tcp" && r.fromPort === agentPort && r.toPort === agentPort && asList(r.cidrBlocks).includes(mgmt),
          ),
          `${f.name}: the agents`,
        ).toBe(true);
        for (const r of egress) {
          expect([agentPort, 443], `${f.name}: ${JSON.stringify(r)}`).toContain(r.fromPort);
          expect(r.toPort, `${f.name}: ${JSON.stringify(r)}`).toBe(r.fromPort);
          expect(asList(r.cidrBlocks), `${f.name}: ${JSON.stringify(r)}`).not.toContain("0.0.0.0/0");
          expect(
            asList(r.prefixListIds).every((id) => typeof id === "string"),
            `${f.name}: ${JSON.stringify(r)}`,
          ).toBe(true);
        }
        // In a rest deploy every agent caller can check the agents' certificates (packages/amphora/src/rest/driver.ts).
        // The deployer's OTTAVA_SERVER_CA, or else the CA certificate.
        expect(f.env.OTTAVA_SERVER_CA ?? f.env.OTTAVA_CA_CERTIFICATE, `${f.name}: the CA it checks the agents with`).toBe(
          d.variant.env.OTTAVA_SERVER_CA ?? "synth-secret:CaCertificate",
        );
      }
      if (!d.variant.rest) expect(routes.filter((r) => r.cidrBlock === mgmt)).toEqual([]);

      // The agent callers reach the AWS services they call through interface endpoints in their subnets:
      // SSM (their secrets), Secrets Manager when they upload certificates kept there; in the account also
      // EC2 (the vpc network driver) and Secrets Manager for the amphorae's own secrets.
      const endpoints = ofType(d, "aws:ec2/vpcEndpoint:VpcEndpoint").filter((e) => e.inputs.vpcEndpointType === "Interface");
      expect(endpoints.map((e) => e.inputs.serviceName).sort()).toEqual(
        d.variant.rest
          ? [
              `com.amazonaws.${REGION}.ssm`,
              ...(d.variant.certificates || inAccount ? [`com.amazonaws.${REGION}.secretsmanager`] : []),
              ...(inAccount ? [`com.amazonaws.${REGION}.ec2`] : []),
            ].sort()
          : [],
      );
      for (const e of endpoints) {
        expect(e.inputs.privateDnsEnabled, e.inputs.serviceName).toBe(true);
        for (const f of inVpc)
          expect(e.inputs.subnetIds, `${e.inputs.serviceName}: ${f.name}`).toEqual(f.resource.inputs.vpcConfig.subnetIds);
      }

      // The amphorae (in the account): their subnets and their security group, as every workload is told.
      const vpc = ofType(d, "aws:ec2/vpc:Vpc")[0]!;
      const vpcCidr = vpc.inputs.cidrBlock;
      const subnets = ofType(d, "aws:ec2/subnet:Subnet");
      const amphoraGroups = inAccount ? asList<string>(d.api.env.OTTAVA_AMP_SECGROUP_LIST?.split(",")) : [];
      if (inAccount) {
        const management = (d.api.env.OTTAVA_AMP_BOOT_NETWORK_LIST ?? "").split(",").map((id) => subnets.find((s) => s.id === id)!);
        // One in each zone of the VPC (those of its private subnets, where the agent callers run), in the management range.
        const zonesOf = (ids: string[]) => ids.map((id) => subnets.find((s) => s.id === id)!.inputs.availabilityZone).sort();
        expect(management.map((s) => s.inputs.availabilityZone).sort()).toEqual(zonesOf(inVpc[0]!.resource.inputs.vpcConfig.subnetIds));
        for (const s of management) {
          expect(s.inputs.vpcId, s.name).toBe(vpc.id);
          expect(within(s.inputs.cidrBlock, mgmt), `${s.name}: ${s.inputs.cidrBlock} in ${mgmt}`).toBe(true);
          expect(s.inputs.mapPublicIpOnLaunch, s.name).toBe(false);
          // No other subnet of the VPC overlaps it.
          for (const other of subnets.filter((o) => o !== s))
            expect(within(other.inputs.cidrBlock, mgmt), `${other.name} (${other.inputs.cidrBlock}) outside ${mgmt}`).toBe(
              management.includes(other),
            );
          // Its routes: the VPC's own, and on the first-boot path the internet through a NAT gateway in a
          // public subnet (one routed to the internet gateway); the baked image, nothing beyond the VPC.
          const own = routes.filter((r) => r.table === tableOf(s.id));
          if (inAccount.firstBoot) {
            expect(
              own.map((r) => r.cidrBlock),
              s.name,
            ).toEqual(["0.0.0.0/0"]);
            const nat = ofType(d, "aws:ec2/natGateway:NatGateway").find((n) => n.id === own[0]!.natGatewayId);
            expect(nat, `${s.name}: a NAT gateway`).toBeDefined();
            expect(routes.some((r) => r.table === tableOf(nat!.inputs.subnetId) && r.cidrBlock === "0.0.0.0/0" && r.gatewayId)).toBe(true);
          } else {
            expect(own, s.name).toEqual([]);
          }
        }
        // Every workload's settings name those subnets, the amphorae's group and the health managers' addresses
        // (SET_BY_STACKS checks them present).
        for (const w of d.workloads.filter(loadsConfig)) {
          expect(w.env.OTTAVA_AMP_BOOT_NETWORK_LIST, w.name).toBe(d.api.env.OTTAVA_AMP_BOOT_NETWORK_LIST);
          expect(w.env.OTTAVA_AMP_SECGROUP_LIST, w.name).toBe(d.api.env.OTTAVA_AMP_SECGROUP_LIST);
          expect(w.env.OTTAVA_CONTROLLER_IP_PORT_LIST, w.name).toBe(d.api.env.OTTAVA_CONTROLLER_IP_PORT_LIST);
        }

        // The amphorae's group admits the agent port from the agent callers' group alone.
        expect(amphoraGroups).toHaveLength(1);
        const amphorae = group(amphoraGroups[0]!);
        expect(amphorae.inputs.vpcId).toBe(vpc.id);
        const callerGroups = [...new Set(inVpc.flatMap((f) => asList<string>(f.resource.inputs.vpcConfig.securityGroupIds)))];
        expect(
          asList<any>(amphorae.inputs.ingress).map((r) => ({ ...pick(r, "protocol", "fromPort", "toPort"), from: r.securityGroups })),
        ).toEqual([{ protocol: "tcp", fromPort: agentPort, toPort: agentPort, from: callerGroups }]);
        // Out: heartbeats to the health manager's load balancer, HTTPS to the endpoints, both in the VPC; the
        // first-boot install the internet (HTTP and HTTPS: Debian's archive) and nothing else.
        const egress = asList<any>(amphorae.inputs.egress).map(
          (r) => `${r.protocol}/${r.fromPort}-${r.toPort}:${asList(r.cidrBlocks).join()}`,
        );
        expect(egress.sort()).toEqual(
          [
            `udp/${port}-${port}:${vpcCidr}`,
            `tcp/443-443:${vpcCidr}`,
            ...(inAccount.firstBoot ? ["tcp/80-80:0.0.0.0/0", "tcp/443-443:0.0.0.0/0"] : []),
          ].sort(),
        );
        // The heartbeat path: the health manager's internal load balancer at a fixed address in each of the
        // agent callers' (private) subnets of the VPC, which the amphorae's heartbeat egress covers and which
        // every workload names as the health managers (the amphorae's agent configuration), its security
        // group admitting them, its UDP listener on the heartbeat port.
        const nlb = ofType(d, "aws:lb/loadBalancer:LoadBalancer")[0]!;
        expect(nlb.inputs.internal).toBe(true);
        expect(nlb.inputs.subnets).toBeUndefined();
        const mappings = asList<{ subnetId: string; privateIpv4Address: string }>(nlb.inputs.subnetMappings);
        expect(mappings.map((m) => m.subnetId).sort()).toEqual([...inVpc[0]!.resource.inputs.vpcConfig.subnetIds].sort());
        for (const m of mappings) {
          const s = subnets.find((x) => x.id === m.subnetId)!;
          expect(s.inputs.vpcId).toBe(vpc.id);
          expect(within(`${m.privateIpv4Address}/32`, s.inputs.cidrBlock), `${m.privateIpv4Address} in ${s.inputs.cidrBlock}`).toBe(true);
        }
        expect(d.api.env.OTTAVA_CONTROLLER_IP_PORT_LIST).toBe(mappings.map((m) => `${m.privateIpv4Address}:${port}`).join(","));
        const nlbIngress = asList<string>(nlb.inputs.securityGroups).flatMap((id) => asList<any>(group(id).inputs.ingress));
        expect(
          nlbIngress.some(
            (r) =>
              ["udp", "-1"].includes(r.protocol) &&
              (r.protocol === "-1" || (r.fromPort <= port && r.toPort >= port)) &&
              asList<string>(r.cidrBlocks).some((c) => within(mgmt, c)),
          ),
          "the load balancer admits the heartbeats",
        ).toBe(true);
        expect(ofType(d, "aws:lb/listener:Listener").map((l) => `${l.inputs.protocol}:${l.inputs.port}`)).toContain(`UDP:${port}`);
      }
      // A NAT gateway only for the first boot: SST's VPC makes none, and a baked image needs none.
      expect(ofType(d, "aws:ec2/natGateway:NatGateway")).toHaveLength(inAccount?.firstBoot ? 1 : 0);

      // An interface endpoint with private DNS takes every call to its service from anywhere in the VPC:
      // it admits HTTPS from every workload there (the health manager's tasks fetch their secret from SSM
      // as they start, through their own network interface), and from the amphorae.
      const inside = [
        ...inVpc.map((f) => ({ name: f.name, groups: asList<string>(f.resource.inputs.vpcConfig.securityGroupIds) })),
        { name: service.name, groups: asList<string>(service.inputs.networkConfiguration.securityGroups) },
        ...(inAccount ? [{ name: "the amphorae", groups: amphoraGroups }] : []),
      ];
      for (const endpoint of ofType(d, "aws:ec2/vpcEndpoint:VpcEndpoint").filter(
        (e) => e.inputs.vpcEndpointType === "Interface" && e.inputs.privateDnsEnabled,
      )) {
        const admits = asList<string>(endpoint.inputs.securityGroupIds)
          .flatMap((id) => asList<any>(group(id).inputs.ingress))
          .filter((r) => r.fromPort <= 443 && r.toPort >= 443);
        for (const w of inside) {
          const admitted = admits.some(
            (r) => asList(r.cidrBlocks).includes(vpcCidr) || asList<string>(r.securityGroups).some((g) => w.groups.includes(g)),
          );
          expect(admitted, `${endpoint.inputs.serviceName} admits ${w.name}`).toBe(true);
        }
      }
    });

    // The deploys whose settings are real values (not the full deploy's markers): each workload starts.
    if (name !== "full") {
      it("gives each workload settings its configuration loads from, its secrets read from their parameters", async () => {
        const parameters = ofType(d, "aws:ssm/parameter:Parameter");
        for (const w of d.workloads.filter(loadsConfig)) {
          const fromTask = Object.fromEntries(
            Object.entries(w.containerSecrets).map(([n, arn]) => [n, parameters.find((p) => p.state.arn === arn)?.inputs.value]),
          );
          const env = await readSecretSettings({ ...w.env, ...fromTask }, async (reference) => {
            const value = parameterOf(d, reference)?.inputs.value;
            if (value === undefined) throw new Error(`no parameter ${reference}`);
            return value;
          });
          expect(() => loadConfig(env), w.name).not.toThrow();
        }
      });
    }
  });

  describe("the deployer's settings (the full deploy: every one set)", () => {
    let d: Deployment;
    beforeAll(() => {
      d = deployments.full!;
    });

    it("gives each workload every OTTAVA_ variable its code reads", () => {
      // The derivation found the configuration's settings (a sanity check on it, not a list to maintain).
      expect(SETTINGS.size).toBeGreaterThan(40);
      for (const w of d.workloads) {
        const reads = new Set([...(loadsConfig(w) ? SETTINGS : []), ...directReads(w)]);
        for (const name of reads) {
          if (LOCAL_ONLY.has(name) || isSecret(name)) continue;
          if (name in REFUSED_BESIDE) {
            expect(w.env[REFUSED_BESIDE[name]!], `${w.name} reads ${REFUSED_BESIDE[name]} in the place of ${name}`).toBeDefined();
            continue;
          }
          const needed = SET_BY_STACKS[name]?.(w, d) ?? ONLY_TO[name]?.(w, d) ?? true;
          if (needed) expect(w.env[name], `${w.name} reads ${name}`).toBeDefined();
        }
      }
    });

    it("passes the deployer's settings unchanged, each only where it belongs", () => {
      expect(PASSED.length).toBeGreaterThan(30);
      for (const w of d.workloads) {
        for (const name of PASSED) {
          const wanted = ONLY_TO[name] ? ONLY_TO[name]!(w, d) : loadsConfig(w);
          if (wanted) expect(w.env[name], `${w.name}: ${name}`).toBe(DEPLOYER_ENV[name]);
          else if (ONLY_TO[name]) expect(w.env[name], `${w.name} is not given ${name}`).toBeUndefined();
        }
      }
    });

    it("sets the table, the flows' ARN prefix, each task and the policy file where the code needs them", () => {
      const table = ofType(d, "aws:dynamodb/table:Table")[0]!;
      const machineArns = new Set(stateMachines(d).map((m) => m.state.arn));
      for (const w of d.workloads) {
        for (const [name, needs] of Object.entries(SET_BY_STACKS)) {
          if (needs(w, d)) expect(w.env[name], `${w.name}: ${name}`).toBeDefined();
        }
        if (SET_BY_STACKS.OTTAVA_TABLE_NAME!(w, d)) expect(w.env.OTTAVA_TABLE_NAME, w.name).toBe(table.inputs.name);
        if (SET_BY_STACKS.OTTAVA_STAGE!(w, d)) expect(w.env.OTTAVA_STAGE, w.name).toBe(d.variant.stage);
        if (SET_BY_STACKS.OTTAVA_STATE_MACHINE_ARN_PREFIX!(w, d)) {
          for (const flow of FLOW_NAMES)
            expect(machineArns.has(`${w.env.OTTAVA_STATE_MACHINE_ARN_PREFIX}${flow}`), `${w.name}: ${flow}`).toBe(true);
        }
        if (w.env.OTTAVA_TASK !== undefined) expect(FLOW_TASKS, w.name).toContain(w.env.OTTAVA_TASK);
      }
      expect(d.api.env.OTTAVA_POLICY_FILE).toMatch(/^\/var\/task\//);
    });
  });
});

interface Statement {
  Effect: string;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

/** Every statement a role is granted: its inline policies, its role policies and our managed policies attached to it. */
/** The job functions' workload names (their schedules', stacks/jobs.ts), by handler. */
const JOB_WORKLOADS: Record<string, string> = {
  "packages/controller/src/jobs/lambda.purgeHandler": "Purge",
  "packages/controller/src/jobs/lambda.repairHandler": "RepairStuck",
  "packages/controller/src/jobs/lambda.sweepHandler": SWEEP,
  "packages/controller/src/jobs/lambda.rotateCertsHandler": "RotateCerts",
};

/** Each workload's role, by its workload name (@ottava/edge workload.ts): the task's, "api", a job's schedule, the health manager's task role. */
function workloadRoles(d: Deployment): { workload: string; role: SynthResource; sources: string[]; w: Workload }[] {
  const functions = d.functions.map((f) => {
    const workload = f.env.OTTAVA_TASK ?? (f === d.api ? "api" : JOB_WORKLOADS[f.resource.inputs.handler]);
    if (!workload) throw new Error(`${f.name}: which workload is it?`);
    return { workload, role: roleByArn(d, f.resource.inputs.role), sources: f.sources, w: f as Workload };
  });
  const containers = ofType(d, "aws:ecs/taskDefinition:TaskDefinition").map((td) => {
    const w = d.workloads.find((x) => !x.resource && isHealthManager(x, d))!;
    return { workload: HEALTH_MANAGER, role: roleByArn(d, td.inputs.taskRoleArn), sources: w.sources, w };
  });
  return [...functions, ...containers];
}

/**
 * The DynamoDB actions the commands in these source files call (the document client's and the low-level
 * client's; a transaction's items by their kind), sorted. Table management (ensureTable) is left out: only
 * npm start creates its table.
 */
function dynamoActionsOf(sources: string[]): string[] {
  const COMMANDS: Record<string, string> = {
    Get: "GetItem",
    Put: "PutItem",
    Update: "UpdateItem",
    Delete: "DeleteItem",
    Query: "Query",
    Scan: "Scan",
    BatchGet: "BatchGetItem",
    BatchWrite: "BatchWriteItem",
    TransactGet: "GetItem",
    GetItem: "GetItem",
    PutItem: "PutItem",
    UpdateItem: "UpdateItem",
    DeleteItem: "DeleteItem",
    BatchGetItem: "BatchGetItem",
    BatchWriteItem: "BatchWriteItem",
    TransactGetItems: "GetItem",
  };
  const ITEMS: Record<string, string> = {
    ConditionCheck: "ConditionCheckItem",
    Put: "PutItem",
    Update: "UpdateItem",
    Delete: "DeleteItem",
  };
  const actions = new Set<string>();
  let transacts = false;
  const items = new Set<string>();
  for (const file of sources) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(/new (\w+)Command\(/g)) {
      if (m[1] === "TransactWrite" || m[1] === "TransactWriteItems") transacts = true;
      else if (COMMANDS[m[1]!] && /@aws-sdk\/(lib-dynamodb|client-dynamodb)/.test(text)) actions.add(`dynamodb:${COMMANDS[m[1]!]}`);
    }
    for (const m of text.matchAll(/\b(ConditionCheck|Put|Update|Delete): \{/g)) items.add(ITEMS[m[1]!]!);
  }
  if (transacts) for (const i of items) actions.add(`dynamodb:${i}`);
  return [...actions].sort();
}

function statementsOf(d: Deployment, role: SynthResource): Statement[] {
  const attached = managedPoliciesOf(d, role);
  const documents = [
    ...(role.inputs.inlinePolicies ?? []).map((p: { policy: string }) => p.policy),
    ...ofType(d, "aws:iam/rolePolicy:RolePolicy")
      .filter((p) => isRole(role, p.inputs.role))
      .map((p) => p.inputs.policy),
    ...ofType(d, "aws:iam/policy:Policy")
      .filter((p) => attached.includes(p.state.arn))
      .map((p) => p.inputs.policy),
  ];
  return documents.flatMap((doc: string) => asList(JSON.parse(doc).Statement as Statement | Statement[]));
}

function managedPoliciesOf(d: Deployment, role: SynthResource): string[] {
  return [
    ...(role.inputs.managedPolicyArns ?? []),
    ...ofType(d, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
      .filter((a) => isRole(role, a.inputs.role))
      .map((a) => a.inputs.policyArn),
  ];
}

/** Whether a policy's `role` (the role's id or name) is that role. */
/** A grant to decrypt certificate secrets (stacks/certificates.ts): kms:Decrypt through Secrets Manager. */
const isCertificateDecrypt = (s: Statement) =>
  asList(s.Action).includes("kms:Decrypt") && String(s.Condition?.StringEquals?.["kms:ViaService"] ?? "").startsWith("secretsmanager.");

const isRole = (role: SynthResource, ref: string | undefined) => ref !== undefined && (ref === role.id || ref === role.state.name);

/** Whether the role is allowed `action` on exactly `resource` (no wildcards: the stacks name what they grant). */
const allows = (d: Deployment, role: SynthResource, action: string, resource: string) =>
  statementsOf(d, role).some((s) => s.Effect === "Allow" && asList(s.Action).includes(action) && asList(s.Resource).includes(resource));

/** The log groups the containers write to (their awslogs driver's group). */
const containerLogGroups = (d: Deployment): string[] =>
  ofType(d, "aws:ecs/taskDefinition:TaskDefinition").flatMap((td) =>
    (JSON.parse(td.inputs.containerDefinitions) as { logConfiguration?: { options?: Record<string, string> } }[]).map(
      (c) => c.logConfiguration?.options?.["awslogs-group"] ?? "",
    ),
  );

type TaskState = { Resource: string; TimeoutSeconds?: number };
/** Every Task state in an ASL States object, Map iterations and Parallel branches included. */
function taskStates(states: Record<string, any>): TaskState[] {
  return Object.values(states).flatMap((s) => [
    ...(s.Type === "Task" ? [s as TaskState] : []),
    ...(s.Iterator ? taskStates(s.Iterator.States) : []),
    ...(s.ItemProcessor ? taskStates(s.ItemProcessor.States) : []),
    ...(s.Branches ?? []).flatMap((b: { States: Record<string, any> }) => taskStates(b.States)),
  ]);
}

/**
 * What the health manager logs when a pass of the health check stops failovers (two stale amphorae at a
 * threshold of two), written by the logger it runs with (packages/controller/src/health/main.ts), and a
 * line of its that is no alert. Call inside a test: the output is captured until it ends.
 */
async function failoverStormLog(): Promise<string[]> {
  const lines = captureOutput();
  const log = createLogger({ service: "ottava-health" }, "info");
  const stale = ["a", "b"].map((id) => ({ id, loadbalancer_id: `lb-${id}`, status: "ALLOCATED" }) as Amphora);
  const deps = {
    log,
    checks: { amphoraeInStatus: async () => [], staleAmphorae: async () => stale },
    store: { updateAmphoraIf: async () => true },
  } as unknown as HealthCheckDeps;
  log.info("health manager ready", { heartbeatPort: 5555 });
  const result = await healthCheck(deps, { heartbeatTimeout: 60, failoverThreshold: 2, failoverOnError: false }, new Date());
  expect(result.stopped).toEqual(["a", "b"]);
  return lines;
}

/** The log of an orphan sweep pass (core's sweepOrphans) that removes two of three resources: their owners are gone. */
async function orphanSweepLog(): Promise<string[]> {
  const lines = captureOutput();
  const log = createLogger({ service: "ottava-jobs" }, "info");
  const removed: string[] = [];
  const resources: CloudResource[] = [
    { kind: "instance", id: "i-gone", amphoraId: "gone" },
    { kind: "instance", id: "i-live", amphoraId: "live" },
    { kind: "security-group", id: "sg-gone", loadBalancerId: "lb-gone", createdAt: "2020-01-01T00:00:00Z" },
  ];
  const result = await sweepOrphans({
    log,
    graceSec: 900,
    store: {
      getAmphora: async (id: string) => (id === "live" ? ({ id, status: "ALLOCATED", compute_id: "i-live" } as Amphora) : undefined),
      getLoadBalancer: async () => undefined,
    } as unknown as SweepDeps["store"],
    sweeper: {
      resources: async function* () {
        yield* resources;
      },
      remove: async (r: CloudResource) => void removed.push(r.id),
    },
  });
  expect(result.removed.map((r) => r.id)).toEqual(["i-gone", "sg-gone"]);
  expect(removed).toEqual(["i-gone", "sg-gone"]);
  return lines;
}

/**
 * A CloudWatch Logs JSON filter pattern of the one form the stacks use, `{ $.<field> = "<text>" }` (no
 * wildcard), as a test of a log line; any other form fails the test, to be taught here.
 */
function jsonFilter(pattern: string): (line: string) => boolean {
  const m = /^\{\s*\$\.([A-Za-z_][\w.]*)\s*=\s*"([^"*]*)"\s*\}$/.exec(pattern);
  if (!m) throw new Error(`a metric filter pattern this test does not read: ${pattern}`);
  const [, path, text] = m;
  return (line) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return false;
    }
    for (const key of path!.split(".")) value = (value as Record<string, unknown> | undefined)?.[key];
    return value === text;
  };
}

/** What ensureTable (packages/db/src/table.ts) asks DynamoDB for when the table does not exist: the command inputs by command. */
async function tableDefinition(): Promise<Record<string, any>> {
  const sent: Record<string, any> = {};
  let describes = 0;
  const client = {
    send: async (command: { constructor: { name: string }; input: unknown }) => {
      const name = command.constructor.name;
      sent[name] = command.input;
      if (name === "DescribeTableCommand" && describes++ === 0)
        throw new ResourceNotFoundException({ message: "no such table", $metadata: {} });
      if (name === "DescribeTableCommand") return { Table: { TableStatus: "ACTIVE", GlobalSecondaryIndexes: [] } };
      if (name === "DescribeTimeToLiveCommand") return { TimeToLiveDescription: { TimeToLiveStatus: "DISABLED" } };
      return {};
    },
  };
  await ensureTable(client as unknown as DynamoDBClient, "ottava");
  return sent;
}

/** Is IPv4 CIDR a inside CIDR b? (parseIpv4Cidr takes nothing wider than a /8: the whole internet is said here.) */
function within(a: string, b: string): boolean {
  if (b === "0.0.0.0/0") return true;
  const [x, y] = [parseIpv4Cidr(a), parseIpv4Cidr(b)];
  if (typeof x === "string" || typeof y === "string") throw new Error(`${a} or ${b}: not a CIDR`);
  return x.prefix >= y.prefix && (y.prefix === 0 || x.base >>> (32 - y.prefix) === y.base >>> (32 - y.prefix));
}

const pick = (o: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));

const sortBy = <T extends Record<string, any>>(list: T[], key: string) =>
  [...list].sort((a, b) => String(a[key]).localeCompare(String(b[key])));

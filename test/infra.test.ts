// The AWS deployment, checked offline: sst.config.ts's run() evaluated by SST's own components under
// Pulumi's mocks (test/support/synth.ts), then the recorded resources checked against the code they
// deploy: handlers, state machines and their roles, the API route, the settings each workload reads,
// secrets, the table and IAM.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ResourceNotFoundException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "@ottava/core";
import { ensureTable } from "@ottava/db";
import { CA_TASKS, FLOW_NAMES, FLOW_TASKS, definitionOf } from "@ottava/controller";
import { synthesize, type SynthResource, type Synthesis } from "./support/synth";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CONFIG_MODULE = "packages/core/src/config.ts";
const STEP_FUNCTIONS_ENGINE = "packages/controller/src/engine-sfn.ts";

/** A deployed piece of Ottava's code: a Lambda function, or the health manager's container. */
interface Workload {
  name: string;
  env: Record<string, string>;
  /** A container's task-definition secrets: name → valueFrom (an SSM parameter or Secrets Manager ARN). */
  containerSecrets: Record<string, string>;
  /** The repository's source files in its bundle. */
  sources: string[];
}

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
  "OTTAVA_COMPUTE_DRIVER",
  "OTTAVA_NETWORK_DRIVER",
  "OTTAVA_LOCAL_VIP_RANGE",
  "OTTAVA_HAPROXY_BINARY",
  "OTTAVA_CERT_MANAGER", // the local certificate manager reads PEM files from the local disk
  "OTTAVA_CERT_STORAGE_PATH",
  "OTTAVA_CLEANUP_INTERVAL", // npm start's housekeeping timers; on AWS, the schedules in stacks/jobs.ts
  "OTTAVA_CERT_INTERVAL",
]);

/** The settings the stacks set themselves, each on the workloads that need it (values checked below). */
const SET_BY_STACKS: Record<string, (w: Workload, d: Deployment) => boolean> = {
  OTTAVA_TABLE_NAME: (w) => loadsConfig(w),
  OTTAVA_STATE_MACHINE_ARN_PREFIX: (w) => w.sources.includes(STEP_FUNCTIONS_ENGINE), // what starts or reads flows
  OTTAVA_TASK: (w) => w.sources.includes("packages/controller/src/lambda.ts"), // the task functions' entry
  OTTAVA_POLICY_FILE: (w, d) => w === d.api, // the deployer's policy file, shipped in the API's bundle
};

/** Passed from the deployer's environment to some workloads only: nowhere else. */
const ONLY_TO: Record<string, (w: Workload, d: Deployment) => boolean> = {
  // Only the API validates tokens; elsewhere `keystone` would make loadConfig demand the Keystone service
  // user, a secret only the API is given.
  OTTAVA_AUTH_STRATEGY: (w, d) => w === d.api,
};

// ─── SECRETS: the one place saying how secrets may arrive (adjust it when secrets move) ──────────────
// A secret is never copied from the deployer's environment. A workload that needs one gets it either as
// its value (OTTAVA_<NAME>, from an SST secret) or as where to fetch it: OTTAVA_<NAME>_PARAMETER (an SSM
// parameter) or OTTAVA_<NAME>_SECRET_NAME / _SECRET_ARN (Secrets Manager), in its environment or, for a
// container, its task definition's secrets. A workload that does not need it gets none of these.
const secretDeliveries = (name: string) => [name, `${name}_PARAMETER`, `${name}_SECRET_NAME`, `${name}_SECRET_ARN`];
/** A secret's value or reference: never passed through from the deployer's environment. */
const isSecret = (name: string): boolean => Object.keys(SECRETS).some((s) => secretDeliveries(s).includes(name));
const isSigningTask = (w: Workload) => (CA_TASKS as readonly string[]).includes(w.env.OTTAVA_TASK ?? "");
const SECRETS: Record<string, (w: Workload, d: Deployment) => boolean> = {
  // The Keystone service user: loadConfig requires it wherever OTTAVA_AUTH_STRATEGY is keystone.
  OTTAVA_KEYSTONE_URL: (w) => w.env.OTTAVA_AUTH_STRATEGY === "keystone",
  OTTAVA_KEYSTONE_USERNAME: (w) => w.env.OTTAVA_AUTH_STRATEGY === "keystone",
  OTTAVA_KEYSTONE_PASSWORD: (w) => w.env.OTTAVA_AUTH_STRATEGY === "keystone",
  OTTAVA_KEYSTONE_PROJECT_NAME: (w) => w.env.OTTAVA_AUTH_STRATEGY === "keystone",
  // The CA amphora certificates are signed with: only the tasks that sign (CA_TASKS).
  OTTAVA_CA_CERTIFICATE: isSigningTask,
  OTTAVA_CA_PRIVATE_KEY: isSigningTask,
  OTTAVA_CA_PRIVATE_KEY_PASSPHRASE: isSigningTask,
  // The heartbeats' HMAC key: the health manager, whose entry refuses to start without it.
  OTTAVA_HEARTBEAT_KEY: (w) => w.sources.includes("packages/controller/src/health/main.ts"),
  // The agents' client certificate: nobody; the REST driver has the CA issue one when it is unset.
  OTTAVA_CLIENT_CERT: () => false,
};

// ─── IAM: the known grants on "*" ────────────────────────────────────────────────────────────────────
/** Actions whose only resource is "*": nothing narrower exists. */
const ACTIONS_ON_STAR_ONLY = new Set([
  // Step Functions' log delivery (the flows' error logs): CloudWatch Logs takes "*" for these.
  "logs:CreateLogDelivery",
  "logs:GetLogDelivery",
  "logs:UpdateLogDelivery",
  "logs:DeleteLogDelivery",
  "logs:ListLogDeliveries",
  "logs:PutResourcePolicy",
  "logs:DescribeResourcePolicies",
  "logs:DescribeLogGroups",
  // ECS Exec's channels into the health manager's container (SST's task role).
  "ssmmessages:CreateControlChannel",
  "ssmmessages:CreateDataChannel",
  "ssmmessages:OpenControlChannel",
  "ssmmessages:OpenDataChannel",
  // X-Ray, should tracing be turned on.
  "xray:PutTraceSegments",
  "xray:PutTelemetryRecords",
]);
/**
 * AWS-managed policies SST attaches (their statements are AWS's, not in the synthesized policies):
 * AWSLambdaBasicExecutionRole (each function's logs; AWS grants them on "*") and
 * AmazonECSTaskExecutionRolePolicy (the container's image pull and logs).
 */
const MANAGED_POLICIES = new Set([
  "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
  "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy",
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

// ─── The synthesized deployment ──────────────────────────────────────────────────────────────────────
interface Deployment {
  synth: Synthesis;
  workloads: Workload[];
  /** The function behind the API's route. */
  api: Workload;
  functionArns: Map<string, Workload>;
}

const SETTINGS = configSettings();
/** A policy file, named as the README says (relative to the repository; SST copies it from there). */
const policyFile = ".sst/ottava-synth-policy.yaml";
/**
 * The deployer's environment the deployment is synthesized with: every setting that could be passed set
 * to a marker, the secrets too (which must not be copied), and the values the stacks interpret: Keystone
 * auth, a policy file and a management network (the deployment with every optional part).
 */
const DEPLOYER_ENV: Record<string, string> = {
  ...Object.fromEntries(
    [...SETTINGS].filter((n) => !LOCAL_ONLY.has(n) && !(n in SET_BY_STACKS)).map((n) => [n, isSecret(n) ? `deployer-secret:${n}` : `deployer:${n}`]),
  ),
  OTTAVA_AUTH_STRATEGY: "keystone",
  OTTAVA_HEARTBEAT_PORT: "5556",
  OTTAVA_POLICY_FILE: policyFile,
  OTTAVA_AMPHORA_MGMT_CIDR: "172.16.0.0/12",
};
/** The settings passed through from the deployer's environment, with its values. */
const PASSED = Object.keys(DEPLOYER_ENV).filter((n) => SETTINGS.has(n) && !isSecret(n) && !(n in SET_BY_STACKS));

let d: Deployment;

beforeAll(async () => {
  mkdirSync(join(root, ".sst"), { recursive: true });
  writeFileSync(join(root, policyFile), '"load-balancer:read": "rule:admin_or_owner"\n');
  const synth = await synthesize(DEPLOYER_ENV);

  const functions = synth.resources
    .filter((r) => r.type === "aws:lambda/function:Function")
    .map((r): Workload & { resource: SynthResource } => {
      const build = synth.builds.find((b) => `${b.functionID}Function` === r.name);
      return { name: r.name, env: r.inputs.environment?.variables ?? {}, containerSecrets: {}, sources: ownSources(build?.inputs ?? []), resource: r };
    });
  const containers = await Promise.all(synth.resources.filter((r) => r.type === "aws:ecs/taskDefinition:TaskDefinition").flatMap((td) => containerWorkloads(synth, td)));
  const functionArns = new Map(functions.map((f) => [f.resource.state.arn as string, f as Workload]));
  const integration = synth.resources.find((r) => r.type === "aws:apigatewayv2/integration:Integration");
  const api = functionArns.get(integration?.inputs.integrationUri);
  if (!api) throw new Error("no function behind the API's integration");
  d = { synth, workloads: [...functions, ...containers], api, functionArns };
}, 300_000);

/** Repository files only (no node_modules). */
const ownSources = (inputs: string[]) => inputs.filter((f) => !f.includes("node_modules/"));

/** A task definition's containers, each with the sources of its image's entry (the Dockerfile's CMD, bundled). */
function containerWorkloads(synth: Synthesis, td: SynthResource): Promise<Workload>[] {
  const image = synth.resources.find((r) => r.type === "docker-build:index:Image");
  const dockerfile = readFileSync(image!.inputs.dockerfile.location, "utf8");
  const entry = /^CMD \[.*"([^"]+\.ts)"\]\s*$/m.exec(dockerfile)?.[1];
  if (!entry) throw new Error(`${image!.inputs.dockerfile.location}: no CMD running a .ts entry`);
  return (JSON.parse(td.inputs.containerDefinitions) as any[]).map(async (c): Promise<Workload> => {
    const bundle = await build({ absWorkingDir: root, entryPoints: [entry], bundle: true, platform: "node", format: "esm", write: false, metafile: true, logLevel: "silent" });
    return {
      name: c.name,
      env: Object.fromEntries((c.environment ?? []).map((e: { name: string; value: string }) => [e.name, e.value])),
      containerSecrets: Object.fromEntries((c.secrets ?? []).map((s: { name: string; valueFrom: string }) => [s.name, s.valueFrom])),
      sources: ownSources(Object.keys(bundle.metafile.inputs)),
    };
  });
}

const ofType = (type: string) => d.synth.resources.filter((r) => r.type === type);
const asList = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

describe("the AWS deployment, synthesized offline from sst.config.ts", () => {
  it("pins the SST it was written for", () => {
    const sst = JSON.parse(readFileSync(join(root, "node_modules", "sst", "package.json"), "utf8")).version;
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(pkg.devDependencies.sst).toBe(sst);
    expect(d.synth.app.version).toBe(sst);
  });

  it("builds every function's handler from a file that exists, exporting the handler", () => {
    const functions = ofType("aws:lambda/function:Function");
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      const build = d.synth.builds.find((b) => `${b.functionID}Function` === fn.name);
      expect(build, `${fn.name} was not built`).toBeDefined();
      expect(fn.inputs.handler).toBe(build!.handler);
      expect(fn.inputs.runtime).toBe(build!.runtime);
      expect(build!.exports, `${fn.name}: the bundle of ${build!.handler}`).toContain(build!.handler.slice(build!.handler.lastIndexOf(".") + 1));
    }
    // Every workload's bundle holds code of this repository (the container's too).
    for (const w of d.workloads) expect(w.sources.length, w.name).toBeGreaterThan(0);
  });

  it("deploys one state machine per flow, each Task a declared function", () => {
    const machines = ofType("aws:sfn/stateMachine:StateMachine");
    const { name, stage } = d.synth.app;
    expect(machines.map((m) => m.inputs.name).sort()).toEqual(FLOW_NAMES.map((f) => `${name}-${stage}-${f}`).sort());
    for (const m of machines) {
      const tasks = taskResources(JSON.parse(m.inputs.definition).States);
      expect(tasks.length, m.name).toBeGreaterThan(0);
      for (const arn of tasks) expect(d.functionArns.has(arn), `${m.name}: Task Resource ${arn} is no declared function`).toBe(true);
    }
    // Every flow task has its function.
    const taskFunctions = d.workloads.filter((w) => w.env.OTTAVA_TASK !== undefined).map((w) => w.env.OTTAVA_TASK);
    expect([...taskFunctions].sort()).toEqual([...FLOW_TASKS].sort());
  });

  it("runs each flow's ASL, each Task calling its own task's function", () => {
    for (const flow of FLOW_NAMES) {
      const machine = ofType("aws:sfn/stateMachine:StateMachine").find((m) => m.inputs.name === `${d.synth.app.name}-${d.synth.app.stage}-${flow}`)!;
      const deployed = JSON.parse(machine.inputs.definition, (key, value) =>
        key === "Resource" && d.functionArns.has(value) ? `task:${d.functionArns.get(value)!.env.OTTAVA_TASK}` : value,
      );
      expect(deployed, flow).toEqual(definitionOf(flow, (task) => `task:${task}`));
    }
  });

  it("lets each flow's role invoke exactly the functions of its Tasks", () => {
    for (const m of ofType("aws:sfn/stateMachine:StateMachine")) {
      const tasks = new Set(taskResources(JSON.parse(m.inputs.definition).States));
      const role = ofType("aws:iam/role:Role").find((r) => r.state.arn === m.inputs.roleArn);
      expect(role, `${m.name}: its role`).toBeDefined();
      expect(managedPoliciesOf(role!).filter((arn) => arn.startsWith("arn:aws:iam::aws:policy/")), `${m.name}: AWS-managed policies on its role`).toEqual([]);
      const invokable = new Set(
        statementsOf(role!)
          .filter((s) => s.Effect === "Allow" && asList(s.Action).some((a) => a === "*" || a === "lambda:*" || a === "lambda:InvokeFunction"))
          .flatMap((s) => asList(s.Resource)),
      );
      expect([...invokable].sort(), m.name).toEqual([...tasks].sort());
    }
  });

  it("routes the API to its function, which API Gateway may invoke", () => {
    const gateway = ofType("aws:apigatewayv2/api:Api");
    expect(gateway).toHaveLength(1);
    const route = ofType("aws:apigatewayv2/route:Route").find((r) => r.inputs.routeKey === "$default");
    expect(route?.inputs.apiId).toBe(gateway[0]!.id);
    const integration = ofType("aws:apigatewayv2/integration:Integration").find((i) => route!.inputs.target === `integrations/${i.id}`);
    expect(integration?.inputs).toMatchObject({ apiId: gateway[0]!.id, integrationType: "AWS_PROXY" });
    const fn = d.functionArns.get(integration!.inputs.integrationUri);
    expect(fn?.sources).toContain("packages/api/src/lambda.ts");
    const arn = integration!.inputs.integrationUri as string;
    const fnName = ofType("aws:lambda/function:Function").find((f) => f.state.arn === arn)!.inputs.name;
    const permission = ofType("aws:lambda/permission:Permission").find(
      (p) => [arn, fnName].includes(p.inputs.function) && p.inputs.principal === "apigateway.amazonaws.com" && p.inputs.action === "lambda:InvokeFunction",
    );
    expect(permission, "API Gateway's permission to invoke the API function").toBeDefined();
    expect(permission!.inputs.sourceArn).toBe(`${gateway[0]!.state.executionArn}/*`);
  });

  it("gives each workload every OTTAVA_ variable its code reads", () => {
    // The derivation found the configuration's settings (a sanity check on it, not a list to maintain).
    expect(SETTINGS.size).toBeGreaterThan(40);
    for (const w of d.workloads) {
      const reads = new Set([...(loadsConfig(w) ? SETTINGS : []), ...directReads(w)]);
      for (const name of reads) {
        if (LOCAL_ONLY.has(name) || isSecret(name)) continue;
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
    const table = ofType("aws:dynamodb/table:Table")[0]!;
    const machineArns = new Set(ofType("aws:sfn/stateMachine:StateMachine").map((m) => m.state.arn));
    for (const w of d.workloads) {
      for (const [name, needs] of Object.entries(SET_BY_STACKS)) {
        if (needs(w, d)) expect(w.env[name], `${w.name}: ${name}`).toBeDefined();
      }
      if (SET_BY_STACKS.OTTAVA_TABLE_NAME!(w, d)) expect(w.env.OTTAVA_TABLE_NAME, w.name).toBe(table.inputs.name);
      if (SET_BY_STACKS.OTTAVA_STATE_MACHINE_ARN_PREFIX!(w, d)) {
        for (const flow of FLOW_NAMES) expect(machineArns.has(`${w.env.OTTAVA_STATE_MACHINE_ARN_PREFIX}${flow}`), `${w.name}: ${flow}`).toBe(true);
      }
      if (w.env.OTTAVA_TASK !== undefined) expect(FLOW_TASKS, w.name).toContain(w.env.OTTAVA_TASK);
    }
    expect(d.api.env.OTTAVA_POLICY_FILE).toMatch(/^\/var\/task\//);
  });

  it("delivers each secret to the workloads that need it, to no other, never from the deployer's environment", () => {
    const delivered = (w: Workload, name: string) => secretDeliveries(name).filter((n) => w.env[n] !== undefined || w.containerSecrets[n] !== undefined);
    for (const w of d.workloads) {
      for (const [name, needs] of Object.entries(SECRETS)) {
        if (needs(w, d)) expect(delivered(w, name), `${w.name} needs ${name}`).not.toEqual([]);
        else expect(delivered(w, name), `${w.name} does not need ${name}`).toEqual([]);
      }
      for (const [name, value] of Object.entries(w.env)) {
        expect(value.startsWith("deployer-secret:"), `${w.name}: ${name} copied from the deployer's environment`).toBe(false);
        // A value from an SST secret only under a secret's name.
        if (value.startsWith("synth-secret:")) expect(isSecret(name), `${w.name}: ${name} holds a secret`).toBe(true);
      }
    }
  });

  it("creates the table packages/db/src/table.ts defines", async () => {
    const defined = await tableDefinition();
    const create = defined.CreateTableCommand;
    const tables = ofType("aws:dynamodb/table:Table");
    expect(tables).toHaveLength(1);
    const t = tables[0]!.inputs;
    const keyOf = (schema: { AttributeName: string; KeyType: string }[], type: string) => schema.find((k) => k.KeyType === type)?.AttributeName;
    expect({ hashKey: t.hashKey, rangeKey: t.rangeKey }).toEqual({ hashKey: keyOf(create.KeySchema, "HASH"), rangeKey: keyOf(create.KeySchema, "RANGE") });
    expect(sortBy(t.attributes, "name")).toEqual(sortBy(create.AttributeDefinitions.map((a: any) => ({ name: a.AttributeName, type: a.AttributeType })), "name"));
    const gsi = (g: any) => ({ name: g.name, hashKey: g.hashKey, rangeKey: g.rangeKey, projectionType: g.projectionType, nonKeyAttributes: g.nonKeyAttributes ?? [] });
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
    expect(t.pointInTimeRecovery?.enabled).toBe(defined.UpdateContinuousBackupsCommand.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled);
  });

  it("grants no * action, and * resources only to the actions that take nothing narrower", () => {
    const roles = ofType("aws:iam/role:Role");
    const check = (where: string, statements: Statement[]) => {
      for (const s of statements) {
        if (s.Effect !== "Allow") continue;
        const what = `${where}: ${JSON.stringify(s)}`;
        expect(s.NotAction ?? s.NotResource, what).toBeUndefined();
        expect(asList(s.Action), what).not.toContain("*");
        if (asList(s.Resource).includes("*")) for (const a of asList(s.Action)) expect(ACTIONS_ON_STAR_ONLY.has(a), `${what}: ${a} on *`).toBe(true);
      }
    };
    for (const role of roles) {
      for (const arn of managedPoliciesOf(role)) {
        // AWS's own policies: only the known ones. Any other must be one of ours, checked with the role.
        if (arn.startsWith("arn:aws:iam::aws:policy/")) expect(MANAGED_POLICIES.has(arn), `${role.name}: managed policy ${arn}`).toBe(true);
        else expect(ofType("aws:iam/policy:Policy").some((p) => p.state.arn === arn), `${role.name}: ${arn} is declared`).toBe(true);
      }
      check(role.name, statementsOf(role));
    }
    for (const type of ["aws:iam/policy:Policy", "aws:iam/userPolicy:UserPolicy", "aws:iam/groupPolicy:GroupPolicy"]) {
      for (const p of ofType(type)) check(p.name, asList(JSON.parse(p.inputs.policy).Statement));
    }
    // A container's secrets are readable by its execution role, and by exactly their ARNs.
    for (const td of ofType("aws:ecs/taskDefinition:TaskDefinition")) {
      const role = roles.find((r) => r.state.arn === td.inputs.executionRoleArn)!;
      for (const c of JSON.parse(td.inputs.containerDefinitions) as { secrets?: { valueFrom: string }[] }[]) {
        for (const { valueFrom } of c.secrets ?? []) {
          const readable = statementsOf(role).some(
            (s) => s.Effect === "Allow" && asList(s.Resource).includes(valueFrom) && asList(s.Action).some((a) => a === "ssm:GetParameters" || a === "secretsmanager:GetSecretValue"),
          );
          expect(readable, `${role.name} reads ${valueFrom}`).toBe(true);
        }
      }
    }
  });
});

interface Statement {
  Effect: string;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
}

/** Every statement a role is granted: its inline policies, its role policies and our managed policies attached to it. */
function statementsOf(role: SynthResource): Statement[] {
  const attached = managedPoliciesOf(role);
  const documents = [
    ...(role.inputs.inlinePolicies ?? []).map((p: { policy: string }) => p.policy),
    ...ofType("aws:iam/rolePolicy:RolePolicy")
      .filter((p) => p.inputs.role === role.id || p.inputs.role === role.inputs.name)
      .map((p) => p.inputs.policy),
    ...ofType("aws:iam/policy:Policy")
      .filter((p) => attached.includes(p.state.arn))
      .map((p) => p.inputs.policy),
  ];
  return documents.flatMap((doc: string) => asList(JSON.parse(doc).Statement as Statement | Statement[]));
}

function managedPoliciesOf(role: SynthResource): string[] {
  return [
    ...(role.inputs.managedPolicyArns ?? []),
    ...ofType("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
      .filter((a) => a.inputs.role === role.id || a.inputs.role === role.inputs.name)
      .map((a) => a.inputs.policyArn),
  ];
}

/** Every Task state's Resource in an ASL States object, Map iterations and Parallel branches included. */
function taskResources(states: Record<string, any>): string[] {
  return Object.values(states).flatMap((s) => [
    ...(s.Type === "Task" ? [s.Resource as string] : []),
    ...(s.Iterator ? taskResources(s.Iterator.States) : []),
    ...(s.ItemProcessor ? taskResources(s.ItemProcessor.States) : []),
    ...(s.Branches ?? []).flatMap((b: { States: Record<string, any> }) => taskResources(b.States)),
  ]);
}

/** What ensureTable (packages/db/src/table.ts) asks DynamoDB for when the table does not exist: the command inputs by command. */
async function tableDefinition(): Promise<Record<string, any>> {
  const sent: Record<string, any> = {};
  let describes = 0;
  const client = {
    send: async (command: { constructor: { name: string }; input: unknown }) => {
      const name = command.constructor.name;
      sent[name] = command.input;
      if (name === "DescribeTableCommand" && describes++ === 0) throw new ResourceNotFoundException({ message: "no such table", $metadata: {} });
      if (name === "DescribeTableCommand") return { Table: { TableStatus: "ACTIVE", GlobalSecondaryIndexes: [] } };
      if (name === "DescribeTimeToLiveCommand") return { TimeToLiveDescription: { TimeToLiveStatus: "DISABLED" } };
      return {};
    },
  };
  await ensureTable(client as unknown as DynamoDBClient, "ottava");
  return sent;
}

const sortBy = <T extends Record<string, any>>(list: T[], key: string) => [...list].sort((a, b) => String(a[key]).localeCompare(String(b[key])));

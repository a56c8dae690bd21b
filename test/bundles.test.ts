// The Lambda functions' bundles, built as SST builds them with the stacks' settings (as `npm run
// bench:cold` does; it also times them): each holds only what its function imports and answers its
// first request.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FUNCTIONS, bundleFunction, coldStart, writeHarness, type Bundle, type LambdaFunction } from "./support/lambda-bundles";

const dir = mkdtempSync(join(tmpdir(), "ottava-bundles-"));
const bundles = new Map<string, Bundle>();
const fn = (name: string) => FUNCTIONS.find((f) => f.name === name)!;
/** Where a function's bundle is built. */
const outdir = (name: string) => join(dir, name.replace(/\W+/g, "-"));

beforeAll(async () => {
  for (const f of FUNCTIONS) bundles.set(f.name, await bundleFunction(f, outdir(f.name)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The source files of a function matching `re`: where they are, loaded at start or in a chunk. */
const where = (name: string, re: RegExp) => {
  const outputs = bundles.get(name)!.outputs.filter((o) => o.inputs.some((i) => re.test(i)));
  return { atStart: outputs.some((o) => o.atStart), inChunks: outputs.some((o) => !o.atStart) };
};
const X509_LIBRARY = /node_modules\/(@peculiar\/|asn1js\/|tsyringe\/)/;
const CERTS = /packages\/controller\/src\/certs\//;
const YAML = /node_modules\/yaml\//;
/** The test machinery: the DynamoDB meter, its capacity calculator and fault injector (in db's src before they moved), and whatever sits on a package's testing side. */
const MACHINERY = /packages\/db\/(?:src|test\/support)\/(?:metering|capacity|faults)\.ts$|packages\/[^/]+\/test\//;
/** What the settings of the injected faults and latency, and the no-op drivers' fault wrapper, write into a bundle. */
const MACHINERY_TEXT = ["OTTAVA_NOOP_FAULTS", "OTTAVA_NOOP_LATENCY", "OTTAVA_DYNAMODB_FAULTS", "Injected fault"];

describe("the Lambda bundles", () => {
  it("stay within their size budgets (every .mjs file of the function, and those loaded at start)", () => {
    for (const f of FUNCTIONS.filter((f) => f.maxBytes !== undefined)) {
      expect(bundles.get(f.name)!.bytes, f.name).toBeLessThanOrEqual(f.maxBytes!);
    }
    for (const f of FUNCTIONS.filter((f) => f.maxBytesAtStart !== undefined)) {
      expect(bundles.get(f.name)!.bytesAtStart, `${f.name}, loaded at start`).toBeLessThanOrEqual(f.maxBytesAtStart!);
    }
  });

  it("carry zod's English messages and no other locale", () => {
    for (const f of FUNCTIONS) {
      const locales = bundles
        .get(f.name)!
        .outputs.flatMap((o) => o.inputs)
        .filter((i) => /zod\/v4\/locales\//.test(i));
      expect(
        locales.map((i) => i.replace(/^.*locales\//, "")),
        f.name,
      ).toEqual(["en.js"]);
    }
  });

  it("carry the certificate code only in the signing tasks' function, the X.509 library in a chunk loaded on the first signature", () => {
    expect(where("task (signing)", X509_LIBRARY)).toEqual({ atStart: false, inChunks: true });
    expect(where("task (signing)", CERTS).atStart).toBe(true);
    for (const name of ["api", "task", "jobs"]) {
      expect(where(name, X509_LIBRARY), name).toEqual({ atStart: false, inChunks: false });
      expect(where(name, CERTS), name).toEqual({ atStart: false, inChunks: false });
    }
  });

  it("carry the YAML parser only in the API, in a chunk loaded for a YAML policy file", () => {
    expect(where("api", YAML)).toEqual({ atStart: false, inChunks: true });
    for (const name of ["task", "task (signing)", "jobs"]) expect(where(name, YAML), name).toEqual({ atStart: false, inChunks: false });
  });

  it("carry none of the test machinery: no meter, capacity calculator or fault injector of DynamoDB, no fault or latency of the no-op drivers", () => {
    for (const f of FUNCTIONS) {
      const { outputs } = bundles.get(f.name)!;
      expect(
        outputs.flatMap((o) => o.inputs).filter((i) => MACHINERY.test(i)),
        f.name,
      ).toEqual([]);
      const text = outputs.map((o) => readFileSync(join(outdir(f.name), o.file), "utf8")).join("\n");
      expect(
        MACHINERY_TEXT.filter((s) => text.includes(s)),
        f.name,
      ).toEqual([]);
    }
  });

  it("start the API and the jobs without the Step Functions client, a chunk loaded when a flow is first started or described", () => {
    for (const name of ["api", "jobs"])
      expect(where(name, /node_modules\/@aws-sdk\/client-sfn\//), name).toEqual({ atStart: false, inChunks: true });
  });

  it("carry the EC2 client (OTTAVA_COMPUTE_DRIVER=ec2) only in the task functions and the jobs (the orphan sweep), in a chunk loaded on its first call", () => {
    const EC2 = /node_modules\/@aws-sdk\/client-ec2\//;
    for (const name of ["task", "task (signing)", "jobs"]) expect(where(name, EC2), name).toEqual({ atStart: false, inChunks: true });
    expect(where("api", EC2)).toEqual({ atStart: false, inChunks: false });
    // The compute driver only in the task functions; the jobs' sweep, only in theirs.
    const DRIVER = /packages\/aws\/src\/compute\/(ec2|user-data)\.ts$/;
    for (const name of ["task", "task (signing)"]) expect(where(name, DRIVER), name).toEqual({ atStart: false, inChunks: true });
    for (const name of ["api", "jobs"]) expect(where(name, DRIVER), name).toEqual({ atStart: false, inChunks: false });
    expect(where("jobs", /packages\/aws\/src\/sweeper\.ts$/)).toEqual({ atStart: false, inChunks: true });
    // The amphora image scripts the first-boot user data carries: a generated module, bundled as any other.
    for (const name of ["task", "task (signing)"])
      expect(where(name, /packages\/aws\/src\/compute\/image-files\.ts$/), name).toEqual({ atStart: false, inChunks: true });
  });

  it("carry the API's EC2 calls (the profile checks, over the minimal Query client) in a chunk the API loads at its first check", () => {
    const QUERY = /packages\/aws\/src\/profiles\.ts$|packages\/edge\/src\/(aws-query|xml)\.ts$/;
    expect(where("api", QUERY)).toEqual({ atStart: false, inChunks: true });
    expect(where("jobs", QUERY)).toEqual({ atStart: false, inChunks: false });
    // The Neutron look-ups (/network, OTTAVA_NETWORK_DRIVER=vpc): in a chunk the API loads at its first look-up.
    expect(where("api", /packages\/aws\/src\/network\/lookups\.ts$/)).toEqual({ atStart: false, inChunks: true });
  });

  it("carry the Secrets Manager certificate manager (OTTAVA_CERT_MANAGER=secretsmanager) and its PKCS#12 reader in a chunk loaded at the first read", () => {
    for (const name of ["api", "task", "task (signing)"])
      expect(where(name, /packages\/aws\/src\/certs\//), name).toEqual({ atStart: false, inChunks: true });
  });

  it("answer their first request from the bundle alone (GET / for the API, a task that reads nothing)", async () => {
    const harness = writeHarness(dir);
    const answers: [LambdaFunction, unknown][] = [];
    for (const f of FUNCTIONS.filter((f) => f.request)) answers.push([f, (await coldStart(f, bundles.get(f.name)!, harness)).answer]);
    expect(answers.map(([f]) => f.name)).toEqual(["api", "task", "task (signing)"]);
    // coldStart has checked each answer (fn.request.check); the API's, once more, here:
    const api = answers[0]![1] as { statusCode: number; body: string };
    expect(api.statusCode).toBe(200);
    expect(JSON.parse(api.body).versions.at(-1)).toMatchObject({ id: "v2.30", status: "CURRENT" });
    expect(answers[1]![1]).toEqual([0, 1]);
  });

  it("load the jobs' bundle", async () => {
    await expect(coldStart(fn("jobs"), bundles.get("jobs")!, writeHarness(dir))).resolves.toMatchObject({ answer: null });
  });
});

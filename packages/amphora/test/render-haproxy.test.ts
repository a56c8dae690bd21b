// The haproxy.cfg renderer against Octavia 11's own (octavia/common/jinja/haproxy/combined_listeners), over the cases fixtures/octavia-haproxy.py rendered with it, and every configuration it renders through the real `haproxy -c`.
//
// The fixture's outputs are Octavia's, compared whitespace-normalized (trailing spaces dropped,
// runs of blank lines collapsed: nothing else). Where the fixture marks a line of Octavia's output
// as wrong (`corrections`), that line is replaced by the one Ottava renders, and only there. HSTS
// (not in Octavia 11) is checked against Octavia master's template text. Every configuration is
// checked as the amphora agent checks it (`haproxy -c -L <peer> -f <cfg> -f <user-group cfg>`),
// with real certificates, CA and CRL (made with openssl once per run) where it names them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixture } from "./octavia-fixtures";
import { Tree, type Amphora, type Listener, type LoadBalancer, type TreeItem } from "@ottava/core";
import {
  HAPROXY_DEFAULT_SETTINGS,
  haproxyListeners,
  haproxyPeerName,
  renderHaproxyConfig,
  type HaproxyCertPaths,
  type HaproxyConfigInput,
  type HaproxySettings,
} from "../src/render/haproxy";
import { haproxyCheck, type HaproxyCheck } from "./support/haproxy-check";
import { makePki } from "./support/pki";

interface Correction {
  octavia: string;
  ottava: string;
  reasons: string[];
}

interface FixtureCase {
  name: string;
  tree: { lb: LoadBalancer; items: TreeItem[] };
  amphora: Amphora;
  amphorae: Amphora[];
  haproxy_version: string;
  settings: HaproxySettings;
  certs: HaproxyCertPaths;
  octavia: string;
  corrections?: Correction[];
  octavia_raises?: { error: string; reason: string; rendered_as: string };
  haproxy_rejects?: { reason: string; error: string };
}

const FIXTURE = readFixture<{
  defaults: HaproxySettings;
  cases: FixtureCase[];
}>("octavia-haproxy.json");
const CASES = FIXTURE.cases;

/** Trailing spaces dropped, runs of blank lines collapsed to one. */
const normalize = (config: string) =>
  config
    .split("\n")
    .map((line) => line.replace(/ +$/, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");

/** Octavia's output with the lines the fixture marks as wrong replaced by Ottava's. */
function expected(c: FixtureCase): string {
  const lines = c.octavia.split("\n");
  for (const fix of c.corrections ?? []) {
    expect(lines, `${c.name}: the corrected line is in Octavia's output`).toContain(fix.octavia);
    for (let i = 0; i < lines.length; i++) if (lines[i] === fix.octavia) lines[i] = fix.ottava;
  }
  return lines.join("\n");
}

const input = (c: FixtureCase): HaproxyConfigInput => ({
  tree: new Tree(c.tree.lb, c.tree.items),
  amphora: c.amphora,
  amphorae: c.amphorae,
  haproxyVersion: c.haproxy_version,
  certs: c.certs,
  settings: c.settings,
});

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

// ---- haproxy -c ---------------------------------------------------------------------------------

let dir: string;
let checked = 0;

/**
 * Writes the files the configuration names (relative paths resolve in `dir`, where HAProxy runs):
 * a crt-list naming the server certificate, the certificate for `crt`, the CA, the CRL.
 */
function writeReferencedFiles(config: string) {
  const pki = join(dir, "pki");
  for (const [, keyword, path] of config.matchAll(/(?:^|\s)(crt-list|crt|ca-file|crl-file) (\S+)/gm)) {
    if (isAbsolute(path!)) throw new Error(`${keyword} ${path}: the test cannot write an absolute path`);
    const file = join(dir, path!);
    mkdirSync(dirname(file), { recursive: true });
    const content = {
      "crt-list": `${join(pki, "server-and-key.pem")}\n`,
      crt: readFileSync(join(pki, "server-and-key.pem"), "utf8"),
      "ca-file": readFileSync(join(pki, "ca/ca.pem"), "utf8"),
      "crl-file": readFileSync(join(pki, "ca/ca.crl"), "utf8"),
    }[keyword!]!;
    writeFileSync(file, content);
  }
}

/** `haproxy -c` as the amphora agent runs it (upload_haproxy_config), in `dir`. */
function checkConfig(config: string, peer: string): Promise<HaproxyCheck> {
  writeReferencedFiles(config);
  const file = join(dir, "configs", `${checked++}.cfg`);
  writeFileSync(file, config);
  return haproxyCheck(file, peer, dir);
}

/** Taken as the agent takes it: no error, or a configuration without any frontend that "will not start". */
function expectValid(r: HaproxyCheck, what: string) {
  expect(r.valid, `${what}: haproxy -c exited ${r.code}:\n${r.output}`).toBe(true);
}

/** Runs `jobs` with at most `limit` at once. */
async function pool<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

const rendered = new Map<string, string | Error>();
const checks = new Map<string, HaproxyCheck>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ottava-haproxy-"));
  const pki = join(dir, "pki");
  mkdirSync(pki);
  mkdirSync(join(dir, "configs"));
  makePki(pki);
  // The server certificate with its key, as HAProxy takes it.
  writeFileSync(
    join(pki, "server-and-key.pem"),
    readFileSync(join(pki, "server.pem"), "utf8") + readFileSync(join(pki, "server.key"), "utf8"),
  );
  for (const c of CASES) {
    try {
      rendered.set(c.name, renderHaproxyConfig(input(c)));
    } catch (e) {
      rendered.set(c.name, e as Error);
    }
  }
  const names = CASES.filter((c) => typeof rendered.get(c.name) === "string");
  const results = await pool(
    names.map((c) => () => checkConfig(rendered.get(c.name) as string, haproxyPeerName(c.amphora.id))),
    Math.max(4, availableParallelism() * 2),
  );
  names.forEach((c, i) => checks.set(c.name, results[i]!));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---- the fixture --------------------------------------------------------------------------------

describe("renderHaproxyConfig against Octavia 11", () => {
  it("has the fixture's cases (hand-picked and at least 300 random ones)", () => {
    expect(CASES.filter((c) => c.name.startsWith("random ")).length).toBeGreaterThanOrEqual(300);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it("has Octavia's defaults as HAPROXY_DEFAULT_SETTINGS", () => {
    expect({ ...HAPROXY_DEFAULT_SETTINGS }).toEqual(FIXTURE.defaults);
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const config = rendered.get(c.name);
    if (config instanceof Error) throw config;
    expect(normalize(config!)).toBe(normalize(expected(c)));
    const check = checks.get(c.name)!;
    if (c.haproxy_rejects) {
      expect(check.code, `${c.name}: ${c.haproxy_rejects.reason}`).not.toBe(0);
      expect(check.output).toContain(c.haproxy_rejects.error);
    } else {
      expectValid(check, c.name);
    }
  });

  it("gives a reason for every line marked (expected() checks that Octavia renders it)", () => {
    for (const c of CASES) {
      for (const fix of c.corrections ?? []) {
        expect(fix.reasons.length, c.name).toBeGreaterThan(0);
        for (const reason of fix.reasons) expect(reason.length, c.name).toBeGreaterThan(20);
        expect(fix.ottava).not.toBe(fix.octavia);
      }
      if (c.octavia_raises) expect(c.octavia_raises.reason.length).toBeGreaterThan(20);
      if (c.haproxy_rejects) expect(c.haproxy_rejects.reason.length).toBeGreaterThan(20);
    }
  });
});

// ---- HSTS, as Octavia master renders it ---------------------------------------------------------

/**
 * Octavia master's frontend_macro (macros.j2), where HSTS is: the header after the HTTPS redirect of
 * a TERMINATED_HTTPS frontend.
 */
const MASTER_FRONTEND = `    {% if (listener.protocol.lower() ==
       constants.PROTOCOL_TERMINATED_HTTPS.lower()) %}
    redirect scheme https if !{ ssl_fc }
        {% if listener.hsts_directives is defined %}
    http-response set-header Strict-Transport-Security "{{ listener.hsts_directives }}"
        {% endif %}
    {% endif %}`;

/** Octavia master's _transform_listener: the directives, for TERMINATED_HTTPS and PROMETHEUS listeners with a max age. */
function masterDirectives(l: Listener): string | undefined {
  if (!["TERMINATED_HTTPS", "PROMETHEUS"].includes(l.protocol) || l.hsts_max_age == null) return undefined;
  let d = `max-age=${l.hsts_max_age};`;
  if (l.hsts_include_subdomains) d += " includeSubDomains;";
  if (l.hsts_preload) d += " preload;";
  return d;
}

/** The header line of master's template for a listener, if it renders one. */
function masterHstsLine(l: Listener): string | undefined {
  const directives = masterDirectives(l);
  if (directives === undefined || l.protocol.toLowerCase() !== "terminated_https") return undefined;
  const template = MASTER_FRONTEND.split("\n").find((line) => line.includes("Strict-Transport-Security"))!;
  return template.replace("{{ listener.hsts_directives }}", directives);
}

describe("HSTS (API v2.27), as Octavia master renders it", () => {
  const base = CASES.find((c) => c.name === "TERMINATED_HTTPS client authentication modes")!;
  const settings: [number | null | undefined, boolean | null | undefined, boolean | null | undefined][] = [
    [31536000, true, true],
    [31536000, false, true],
    [0, true, false],
    [3600, null, null],
    [null, true, true],
    [undefined, undefined, undefined],
  ];

  it.each(settings.map((s) => [JSON.stringify(s), s] as const))(
    "max age, subdomains, preload %s",
    async (_name, [maxAge, sub, preload]) => {
      const c = clone(base);
      for (const item of c.tree.items) {
        if (item.kind !== "listener") continue;
        Object.assign(item.record, { hsts_max_age: maxAge, hsts_include_subdomains: sub, hsts_preload: preload });
      }
      const config = renderHaproxyConfig(input(c));
      // Master's line after each TERMINATED_HTTPS frontend's redirect, the rest as Octavia 11 renders it.
      const want = expected(c).split("\n");
      const listeners = c.tree.items.filter((i) => i.kind === "listener").map((i) => i.record as Listener);
      for (const l of listeners) {
        const line = masterHstsLine(l);
        if (line === undefined) continue;
        const at = want.indexOf(`frontend ${l.id}`);
        const redirect = want.indexOf("    redirect scheme https if !{ ssl_fc }", at);
        expect(redirect).toBeGreaterThan(at);
        want.splice(redirect + 1, 0, line);
      }
      expect(normalize(config)).toBe(normalize(want.join("\n")));
      if (maxAge != null) expect(config).toContain(`Strict-Transport-Security "max-age=${maxAge};`);
      else expect(config).not.toContain("Strict-Transport-Security");
      expectValid(await checkConfig(config, haproxyPeerName(c.amphora.id)), "HSTS");
    },
  );

  it("is not rendered for PROMETHEUS (master computes it, its template writes it for TERMINATED_HTTPS only) nor HTTP listeners", async () => {
    const c = clone(CASES.find((x) => x.name === "PROMETHEUS listener with TLS")!);
    const http: Listener = {
      ...(clone(c.tree.items[0]!.record) as Listener),
      id: "0b7e2d04-6d3c-4a57-9a55-0e8b1c3f5a01",
      protocol: "HTTP",
      protocol_port: 80,
      default_tls_container_ref: null,
      client_ca_tls_container_ref: null,
    };
    c.tree.items.push({ kind: "listener", record: http });
    for (const item of c.tree.items)
      if (item.kind === "listener") Object.assign(item.record, { hsts_max_age: 600, hsts_include_subdomains: true, hsts_preload: true });
    const config = renderHaproxyConfig(input(c));
    expect(masterDirectives(c.tree.items[0]!.record as Listener)).toBe("max-age=600; includeSubDomains; preload;");
    expect(config).not.toContain("Strict-Transport-Security");
    expect(config).toContain(`frontend ${http.id}`);
    expectValid(await checkConfig(config, haproxyPeerName(c.amphora.id)), "HSTS on PROMETHEUS and HTTP");
  });
});

// ---- the rest of the interface ------------------------------------------------------------------

describe("renderHaproxyConfig's input", () => {
  const simple = CASES.find((c) => c.name === "defaults: one HTTP listener, its pool and two members")!;

  it("takes partial settings over Octavia's defaults", async () => {
    const c = clone(simple);
    const config = renderHaproxyConfig({
      ...input(c),
      settings: { haproxy_stick_size: "1m", base_path: "/run/amphora", connection_logging: undefined },
    });
    expect(config).toBe(
      renderHaproxyConfig({ ...input(c), settings: undefined }).replace(/\/var\/lib\/octavia\/(?=[0-9a-f-]{36}[./])/g, "/run/amphora/"),
    );
    expect(config).toContain(`stats socket /run/amphora/${c.tree.lb.id}.sock mode 0666 level user`);
    expect(config).toContain("log-format ");
    expectValid(await checkConfig(config, haproxyPeerName(c.amphora.id)), "partial settings");
  });

  it("lists the listeners HAProxy serves and refuses a tree without any (Octavia's driver deletes the configuration then)", () => {
    const c = clone(CASES.find((x) => x.name === "every protocol, UDP and SCTP skipped")!);
    const tree = new Tree(c.tree.lb, c.tree.items);
    expect(haproxyListeners(tree).map((l) => l.protocol)).toEqual(["HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS", "PROMETHEUS"]);
    const lvsOnly = new Tree(
      c.tree.lb,
      c.tree.items.filter((i) => i.kind !== "listener" || ["UDP", "SCTP"].includes(String(i.record.protocol))),
    );
    expect(() => renderHaproxyConfig({ ...input(c), tree: lvsOnly })).toThrow(/has no listener HAProxy serves/);
  });

  it("refuses an amphora of another load balancer, a client CA without its file and a version that is none", () => {
    const c = clone(CASES.find((x) => x.name === "TERMINATED_HTTPS client authentication modes")!);
    expect(() =>
      renderHaproxyConfig({ ...input(c), amphora: { ...c.amphora, loadbalancer_id: "e2b0c1b6-57a3-4c35-8e54-4f2e44ff8a11" } }),
    ).toThrow(/is not load balancer/);
    expect(() => renderHaproxyConfig({ ...input(c), certs: { pools: c.certs.pools } })).toThrow(
      /client_ca reference but no client_ca file/,
    );
    expect(() => renderHaproxyConfig({ ...input(c), haproxyVersion: "1:2.6.12-1" })).toThrow(/not a PEP 440 version/);
  });

  it("names peers as the amphora agent does (base64 SHA-1, '-' first made 'x', no '=')", () => {
    // What Octavia's octavia.common.utils.base64_sha1_string gives, without "=".
    expect(haproxyPeerName("sample_amphora_id_1")).toBe("R8eFgVkYabiZ61YYjPr_bR4oG-U");
    const c = CASES.find((x) => x.name.startsWith("peers: IPv6 VRRP addresses"))!;
    const names = [...c.octavia.matchAll(/^ {4}peer (\S+) /gm)].map((m) => m[1]);
    expect(names).toEqual(c.amphorae.filter((a) => a.status === "ALLOCATED").map((a) => haproxyPeerName(a.id)));
    expect(names[0]).toMatch(/^x/);
  });
});

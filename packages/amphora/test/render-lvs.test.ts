// renderLvsConfig (keepalived LVS of UDP and SCTP listeners) against Octavia 11's LvsJinjaTemplater (common/jinja/lvs): the cases fixtures/octavia-renderers.py generated with Octavia's own code.
import { describe, expect, it } from "vitest";
import { normalize, readFixture } from "./octavia-fixtures";
import { Tree, type LoadBalancer, type TreeItem } from "@ottava/core";
import {
  AMPHORA_NAMESPACE,
  LVS_BALANCE_MAP,
  LVS_DEFAULTS,
  LVS_PROTOCOL_MAP,
  expandExpectedCodes,
  renderLvsConfig,
  type LvsSettings,
} from "@ottava/amphora";

interface Case {
  name: string;
  input: { lb: LoadBalancer; items: TreeItem[]; listenerId: string };
  settings: Partial<LvsSettings>;
  octavia: string | null;
  octavia_error?: string;
  wrong?: string;
  expected?: string;
  expected_error?: boolean;
}

const fixture = readFixture<{
  defaults: LvsSettings;
  coverage: { unreachable: Record<string, string>; inline_checked: string[] };
  cases: Case[];
}>("octavia-lvs.json");

const render = (c: Case) => renderLvsConfig(new Tree(c.input.lb, c.input.items), c.input.listenerId, c.settings);

describe("renderLvsConfig equals Octavia 11's LvsJinjaTemplater.build_config", () => {
  it("has the generated cases: random and hand-picked, Octavia's errors and the outputs marked wrong", () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(200);
    expect(fixture.cases.filter((c) => !c.name.startsWith("random")).length).toBeGreaterThanOrEqual(40);
    expect(fixture.cases.filter((c) => c.octavia_error).length).toBeGreaterThan(0);
    expect(fixture.cases.filter((c) => c.wrong).length).toBeGreaterThan(0);
    expect(Object.keys(fixture.coverage.unreachable).length).toBeGreaterThan(0);
  });

  it("has Octavia's defaults", () => {
    expect(LVS_DEFAULTS).toEqual(fixture.defaults);
  });

  for (const c of fixture.cases.filter((c) => !c.wrong && !c.octavia_error)) {
    it(c.name, () => {
      expect(normalize(render(c))).toBe(normalize(c.octavia!));
    });
  }

  for (const c of fixture.cases.filter((c) => !c.wrong && c.octavia_error)) {
    it(`${c.name}: refused, as Octavia refuses it (${c.octavia_error})`, () => {
      expect(() => render(c)).toThrow();
    });
  }

  for (const c of fixture.cases.filter((c) => c.wrong)) {
    it(`${c.name}: differs where Octavia is wrong (${c.wrong})`, () => {
      const ours = normalize(render(c));
      expect(ours).toBe(normalize(c.expected!));
      expect(ours).not.toBe(normalize(c.octavia!));
    });
  }
});

describe("renderLvsConfig", () => {
  const c = fixture.cases.find((x) => x.name === "HTTP monitor, url_path with & (autoescape)")!;

  it("writes a url_path as it is", () => {
    expect(render(c)).toContain("path /check?a=1&b=2\n");
  });

  it("is one file per listener: another listener of the tree is refused by id only", () => {
    expect(() => renderLvsConfig(new Tree(c.input.lb, c.input.items), "no-such-listener")).toThrow(/no-such-listener/);
  });

  it("refuses a listener keepalived's LVS does not serve", () => {
    const items = c.input.items.map((i) => (i.kind === "listener" ? { ...i, record: { ...i.record, protocol: "TCP" } } : i));
    expect(() => renderLvsConfig(new Tree(c.input.lb, items), c.input.listenerId)).toThrow(/TCP/);
  });

  it("uses the settings' base path for the UDP-CONNECT check script", () => {
    const u = fixture.cases.find((x) => x.name === "UDP-CONNECT monitor")!;
    expect(render(u)).toContain(`misc_path "/var/lib/octavia/lvs/check/udp_check.sh `);
    expect(renderLvsConfig(new Tree(u.input.lb, u.input.items), u.input.listenerId, { basePath: "/srv" })).toContain(
      `misc_path "/srv/lvs/check/udp_check.sh `,
    );
  });

  it("has Octavia's maps and names", () => {
    expect(AMPHORA_NAMESPACE).toBe("amphora-haproxy");
    expect(LVS_PROTOCOL_MAP).toEqual({ UDP: "udp", SCTP: "sctp" });
    expect(LVS_BALANCE_MAP).toEqual({ ROUND_ROBIN: "wrr", LEAST_CONNECTIONS: "lc", SOURCE_IP: "sh" });
  });

  it("expands expected codes as utils.expand_expected_codes, sorted as text", () => {
    expect(expandExpectedCodes("200-204")).toEqual(["200", "201", "202", "203", "204"]);
    expect(expandExpectedCodes("404,200")).toEqual(["200", "404"]);
    expect(expandExpectedCodes("200, 202,200")).toEqual(["200", "202"]);
    expect(expandExpectedCodes("204-200")).toEqual([]);
    expect(expandExpectedCodes("98-101")).toEqual(["100", "101", "98", "99"]);
    expect(() => expandExpectedCodes("2x0-204")).toThrow();
  });
});

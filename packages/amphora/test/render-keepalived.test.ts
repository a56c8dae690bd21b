// renderKeepalivedConfig (VRRP of ACTIVE_STANDBY amphorae) against Octavia 11's KeepalivedJinjaTemplater (amphorae/drivers/keepalived/jinja): the cases fixtures/octavia-renderers.py generated with Octavia's own code.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { normalize, readFixture } from "./octavia-fixtures";
import {
  KEEPALIVED_DEFAULTS,
  VRRP_AUTH_DEFAULT,
  newVrrpGroup,
  renderKeepalivedConfig,
  type KeepalivedConfigInput,
  type KeepalivedSettings,
} from "@ottava/amphora";
import { ipNetwork, ipVersion } from "@ottava/core";

interface Case {
  name: string;
  input: KeepalivedConfigInput;
  settings: Partial<KeepalivedSettings>;
  octavia: string | null;
  octavia_error?: string;
  wrong?: string;
  expected?: string;
  expected_error?: boolean;
  octavia_flows: "v1" | "v2";
}

const fixture = readFixture<{
  defaults: KeepalivedSettings;
  coverage: { unreachable: Record<string, string> };
  cases: Case[];
}>("octavia-keepalived.json");

const render = (c: Case) => renderKeepalivedConfig(c.input, c.settings);

describe("renderKeepalivedConfig equals Octavia 11's KeepalivedJinjaTemplater.build_keepalived_config", () => {
  it("has the generated cases: random and hand-picked, Octavia's errors and the outputs marked wrong", () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(140);
    expect(fixture.cases.filter((c) => !c.name.startsWith("random")).length).toBeGreaterThanOrEqual(30);
    expect(fixture.cases.filter((c) => c.octavia_error).length).toBeGreaterThan(0);
    expect(fixture.cases.filter((c) => c.wrong).length).toBeGreaterThan(0);
  });

  it("has Octavia's defaults", () => {
    expect(KEEPALIVED_DEFAULTS).toEqual(fixture.defaults);
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
      if (c.expected_error) {
        expect(c.octavia).toContain("None");
        expect(() => render(c)).toThrow(/the amphora has no/);
      } else {
        const ours = normalize(render(c));
        expect(ours).toBe(normalize(c.expected!));
        expect(ours).not.toBe(normalize(c.octavia!));
      }
    });
  }
});

describe("renderKeepalivedConfig", () => {
  it("creates the VRRP group as CreateVRRPGroupForLB", () => {
    expect(newVrrpGroup("6a1f0b9e-52a1-4c3e-9e6f-1d2a3b4c5d6e", "1a2b3c4")).toEqual({
      vrrp_group_name: "6a1f0b9e52a14c3e9e6f1d2a3b4c5d6e",
      vrrp_auth_type: VRRP_AUTH_DEFAULT,
      vrrp_auth_pass: "1a2b3c4",
      advert_int: 1,
    });
    expect(newVrrpGroup("x-y", "p", { vrrpAdvertInt: 3 }).advert_int).toBe(3);
  });

  it("takes its settings", () => {
    const c = fixture.cases.find((x) => x.name === "MASTER")!;
    const out = renderKeepalivedConfig(c.input, { vrrpCheckInterval: 9, basePath: "/opt/o" });
    expect(out).toContain("    script /opt/o/vrrp/check_script.sh\n    interval 9\n");
  });

  it("adds Ottava's notify_master line only when vrrpNotifyMaster is set, as the vrrp_instance's last line", () => {
    const c = fixture.cases.find((x) => x.name === "MASTER")!;
    const plain = renderKeepalivedConfig(c.input, c.settings);
    expect(plain).not.toContain("notify");
    const out = renderKeepalivedConfig(c.input, { ...c.settings, vrrpNotifyMaster: "/usr/local/sbin/ottava-vrrp-master" });
    // Octavia's file, with the line before the instance's closing brace, and nothing else changed.
    expect(out).toBe(plain.replace(/\n}\n$/, '\n\n    notify_master "/usr/local/sbin/ottava-vrrp-master"\n}\n'));
    expect(out.match(/notify_master/g)).toHaveLength(1);
    for (const bad of ["relative/path", '/a"b', "/a b", "/a\\b", "/a\nb", ""]) {
      expect(() => renderKeepalivedConfig(c.input, { vrrpNotifyMaster: bad }), JSON.stringify(bad)).toThrow(/notify_master/);
    }
  });

  it("writes a notify_master line keepalived itself accepts (keepalived --config-test, in a network namespace with the VRRP interface)", () => {
    const c = fixture.cases.find((x) => x.name === "MASTER")!;
    const dir = mkdtempSync(join(tmpdir(), "ottava-keepalived-"));
    try {
      mkdirSync(join(dir, "vrrp"));
      writeFileSync(join(dir, "vrrp", "check_script.sh"), "#!/bin/sh\n", { mode: 0o755 });
      const script = join(dir, "notify.sh");
      writeFileSync(script, "#!/bin/sh\n", { mode: 0o755 });
      const intf = c.input.amphora.vrrp_interface!;
      const check = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        const conf = join(dir, name);
        const r = spawnSync(
          "/usr/bin/unshare",
          [
            "--net",
            "/bin/sh",
            "-ec",
            `ip link add ${intf} type veth peer name peer0; ip link set ${intf} up; exec /usr/sbin/keepalived --config-test -f ${conf}`,
          ],
          { encoding: "utf8" },
        );
        return { status: r.status, said: (r.stderr + r.stdout).replaceAll(conf, "<conf>") };
      };
      const base = { ...c.settings, basePath: dir };
      const notified = renderKeepalivedConfig(c.input, { ...base, vrrpNotifyMaster: script });
      // keepalived warns about Octavia's own file (no script_security, nopreempt with state MASTER): the line adds nothing to that.
      const plain = check("plain.conf", renderKeepalivedConfig(c.input, base));
      expect(plain.said).toMatch(/SECURITY VIOLATION/);
      expect(check("notified.conf", notified)).toEqual(plain);
      // A misspelt keyword is reported: the comparison above has teeth.
      expect(check("misspelt.conf", notified.replace("notify_master", "notify_mastr")).said).toMatch(/notify_mastr/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads addresses and networks as Python's ipaddress", () => {
    expect(ipVersion("10.0.0.1")).toBe(4);
    expect(ipVersion("fe80::1%eth0")).toBe(6);
    expect(ipVersion("::ffff:1.2.3.4")).toBe(6);
    for (const bad of ["01.2.3.4", "1.2.3", " 1.2.3.4", "1::2::3", "1:2:3:4:5:6:7:8:9", "fe80::1%", "10.0.0.1/32", "12345::"]) {
      expect(() => ipVersion(bad), bad).toThrow();
    }
    expect(ipNetwork("2001:DB8:0:0::/64")).toBe("2001:db8::/64");
    expect(ipNetwork("0:0:1:0:0:1:0:0/128")).toBe("::1:0:0:1:0:0/128");
    expect(ipNetwork("1:0:0:1:0:0:0:0/64")).toBe("1:0:0:1::/64");
    expect(ipNetwork("::ffff:1.2.3.0/120")).toBe("::ffff:102:300/120");
    expect(ipNetwork("fe80::%eth0/64")).toBe("fe80::%eth0/64");
    expect(ipNetwork("10.0.0.0/255.255.255.0")).toBe("10.0.0.0/24");
    expect(ipNetwork("10.0.0.0/0.0.0.255")).toBe("10.0.0.0/24");
    expect(ipNetwork("0.0.0.0/0.0.0.0")).toBe("0.0.0.0/0");
    expect(ipNetwork("10.0.0.0/024")).toBe("10.0.0.0/24");
    expect(ipNetwork("10.0.0.7")).toBe("10.0.0.7/32");
    for (const bad of [
      "10.0.0.1/24",
      "10.0.0.0/33",
      "10.0.0.0/255.0.255.0",
      "10.0.0.0/+24",
      "10.0.0.0/24/1",
      "2001:db8::/129",
      "2001:db8::1/64",
    ]) {
      expect(() => ipNetwork(bad), bad).toThrow();
    }
  });
});

// The local compute and amphora drivers over this machine's amphorae (packages/amphora/src/local: compute.ts, amphora.ts, host.ts, as Octavia's nova_driver and haproxy amphora driver with the amphora agent), with Debian's real HAProxy and the real table.
//
// An amphora built under a data directory long enough that its stats socket path would not fit
// serves a load balancer's tree through HAProxy (reached on its VIP), with its certificate and
// configuration where the agent keeps them; its heartbeats go where its agent configuration says
// (read back from amphora-agent.conf) and report the listener; a tree without listeners stops
// HAProxy; the compute delete removes everything, the short socket alias included.
import { randomUUID } from "node:crypto";
import { createSocket } from "node:dgram";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Tree, unwrapEnvelope, type Amphora, type LoadBalancer, type TreeItem } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { freshTable } from "@ottava/db/testing";
import { noopCertManager } from "../src/noop";
import { renderAgentConfig } from "../src/render/agent-config";
import { LocalAmphoraDriver } from "../src/local/amphora";
import { LocalComputeDriver } from "../src/local/compute";
import { AmphoraHost } from "../src/local/host";
import { AddressRange } from "../src/local/network";

const KEY = `key-${randomUUID()}`;
const VIP = "127.0.106.9";
const log = createLogger({ service: "test" }, "error");

// A load balancer's tree as the renderer's fixture has it (Octavia's models), moved onto loopback.
const FIXTURE = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/octavia-haproxy.json"), "utf8")) as {
  cases: { tree: { lb: LoadBalancer; items: TreeItem[] }; amphora: Amphora }[];
};

let dir: string;
let backend: Server;
let backendPort: number;

const get = (port: number) =>
  new Promise<{ status: number; body: string }>((ok, fail) => {
    const req = request({ host: VIP, port, path: "/", agent: false }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => ok({ status: res.statusCode!, body }));
    });
    req.on("error", fail);
    req.end();
  });

const refused = (port: number) =>
  new Promise<boolean>((ok) => {
    const c = connect(port, VIP);
    c.once("connect", () => (c.destroy(), ok(false)));
    c.once("error", () => ok(true));
  });

beforeAll(async () => {
  // Deep enough that <amphora dir>/<lb id>.sock is longer than a Unix socket path may be.
  dir = mkdtempSync(join(tmpdir(), "ottava-local-amphora-"));
  backend = createServer((_req, res) => res.end("member"));
  backendPort = await new Promise<number>((ok) => backend.listen(0, "127.0.0.1", () => ok((backend.address() as { port: number }).port)));
});

afterAll(async () => {
  await new Promise((ok) => backend?.close(ok));
  rmSync(dir, { recursive: true, force: true });
});

describe("the local compute and amphora drivers", () => {
  it("build, serve, report through heartbeats where the agent configuration says, stop serving, delete", async () => {
    const { store } = await freshTable();
    const root = join(dir, "a-data-directory-whose-path-is-long-enough", "amphorae");
    mkdirSync(root, { recursive: true });
    const host = await AmphoraHost.open({
      root,
      haproxyBinary: "/usr/sbin/haproxy",
      log,
      heartbeat: { key: KEY, intervalSeconds: 1, localReceiver: () => undefined },
    });
    const compute = new LocalComputeDriver(host);
    const driver = new LocalAmphoraDriver({
      host,
      store,
      certificates: noopCertManager,
      controllers: async () => [],
      range: new AddressRange("127.0.106.0/24"),
      secret: KEY,
      log,
    });

    const base = structuredClone(FIXTURE.cases[0]!);
    const lb = { ...base.tree.lb, vip_address: VIP };
    const items = base.tree.items.map((i) =>
      i.kind === "listener"
        ? { ...i, record: { ...i.record, protocol_port: 18480 } }
        : i.kind === "member"
          ? { ...i, record: { ...i.record, address: "127.0.0.1", protocol_port: backendPort } }
          : i,
    );
    const amphoraId = randomUUID();
    const amphora: Amphora = { ...base.amphora, id: amphoraId, loadbalancer_id: lb.id, role: "STANDALONE", status: "ALLOCATED" };

    const computeId = await compute.build({
      amphoraId,
      computeFlavor: null,
      availabilityZone: null,
      serverPem: "-----BEGIN PRIVATE KEY-----\nsecret\n",
      agentConfig: "[DEFAULT]\n",
    });
    expect(await compute.getInstance(computeId)).toMatchObject({ compute_id: amphoraId, lb_network_ip: "127.0.0.1" });
    const amphoraDir = join(root, amphoraId);
    expect(statSync(join(amphoraDir, "server.pem")).mode & 0o777).toBe(0o600);

    // Heartbeats go to the controllers of the agent's configuration, read back from amphora-agent.conf.
    const controller = createSocket("udp4");
    const port = await new Promise<number>((ok) => controller.bind(0, "127.0.0.1", () => ok(controller.address().port)));
    const beats: { id: string; listeners: Record<string, { status: string }> }[] = [];
    controller.on("message", (m) => beats.push(unwrapEnvelope(m, KEY) as (typeof beats)[number]));
    try {
      await driver.updateAgentConfig(
        amphora,
        renderAgentConfig({ amphora, topology: "SINGLE", controllerIpPortList: [`127.0.0.1:${port}`], heartbeatKey: KEY }),
      );
      expect(statSync(join(amphoraDir, "amphora-agent.conf")).mode & 0o777).toBe(0o600);

      await driver.update(new Tree(lb, items), [amphora]);
      expect(await get(18480)).toEqual({ status: 200, body: "member" });
      // The configuration is where the agent keeps it; its stats socket went through a short alias.
      const config = readFileSync(join(amphoraDir, lb.id, "haproxy.cfg"), "utf8");
      const socket = /stats socket (\S+)/.exec(config)![1]!;
      expect(socket.length).toBeLessThanOrEqual(100);
      expect(lstatSync(join(socket, "..")).isSymbolicLink()).toBe(true);
      const listenerId = items.find((i) => i.kind === "listener")!.record.id;
      await expect
        .poll(() => beats.find((b) => b.listeners[listenerId]?.status === "OPEN"), { timeout: 5000 })
        .toMatchObject({ id: amphoraId });

      // No listener left: HAProxy stops.
      await driver.update(
        new Tree(
          lb,
          items.filter((i) => i.kind !== "listener"),
        ),
        [amphora],
      );
      expect(await refused(18480)).toBe(true);
      expect(existsSync(join(amphoraDir, lb.id, "haproxy.cfg"))).toBe(false);

      await compute.delete(computeId);
      expect(existsSync(amphoraDir)).toBe(false);
      expect(existsSync(join(socket, ".."))).toBe(false);
      await expect(compute.getInstance(computeId)).rejects.toThrow(/does not exist/);
    } finally {
      controller.close();
      await host.stopAll();
    }
  });
});

// The fully populated load-balancer create: the whole tree in one POST, built by one flow.
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessApp, pick, SUBNET, webListener } from "@ottava/local/testing";

let t: Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";
const fault = (status: number, faultstring: string) => ({ status, body: { faultcode: "Client", faultstring, debuginfo: null } });

const graph = () => ({
  loadbalancer: {
    name: "full",
    vip_subnet_id: SUBNET,
    listeners: [
      webListener(
        {
          members: [
            { address: "192.0.2.10", protocol_port: 8080 },
            { address: "192.0.2.11", protocol_port: 8080, weight: 5 },
          ],
          healthmonitor: { type: "HTTP", delay: 5, timeout: 3, max_retries: 3, url_path: "/health" },
        },
        {
          name: "http",
          l7policies: [
            {
              name: "api",
              action: "REDIRECT_TO_POOL",
              redirect_pool: { name: "api" },
              rules: [{ type: "PATH", compare_type: "STARTS_WITH", value: "/api" }],
            },
            { action: "REJECT", rules: [{ type: "HEADER", compare_type: "EQUAL_TO", key: "X-Bad", value: "yes" }] },
          ],
        },
      ),
      { name: "tcp", protocol: "TCP", protocol_port: 443 },
    ],
    pools: [
      { name: "api", protocol: "HTTP", lb_algorithm: "LEAST_CONNECTIONS", members: [{ address: "192.0.2.20", protocol_port: 9000 }] },
    ],
  },
});

beforeAll(async () => {
  t = await inProcessApp();
});

describe("fully populated create", () => {
  it("answers 201 with the whole graph, then one flow makes every object ACTIVE", async () => {
    const res = await t.call("POST", LBS, graph());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const lb = res.body.loadbalancer;
    expect(lb.provisioning_status).toBe("PENDING_CREATE");
    expect(lb.listeners.map((l: { name: string }) => l.name).sort()).toEqual(["http", "tcp"]);
    expect(lb.pools.map((p: { name: string }) => p.name).sort()).toEqual(["api", "web"]);
    const http = lb.listeners.find((l: { name: string }) => l.name === "http");
    const web = lb.pools.find((p: { name: string }) => p.name === "web");
    const api = lb.pools.find((p: { name: string }) => p.name === "api");
    expect(http.default_pool_id).toBe(web.id);
    expect(http.l7policies).toHaveLength(2);
    expect(http.l7policies[0]).toMatchObject({ action: "REDIRECT_TO_POOL", redirect_pool_id: api.id, position: 1 });
    expect(http.l7policies[0].rules[0]).toMatchObject({ type: "PATH", value: "/api" });
    expect(web.members.map((m: { address: string }) => m.address)).toEqual(["192.0.2.10", "192.0.2.11"]);
    expect(web.healthmonitor).toMatchObject({ type: "HTTP", url_path: "/health" });
    expect(http).not.toHaveProperty("loadbalancers");

    const executions = (await t.store.getLoadBalancer(lb.id))!.executionArn;
    await t.settle();
    // One flow: the create's own execution is the last on the LB.
    expect((await t.store.getLoadBalancer(lb.id))!.executionArn).toBe(executions);
    const status = (await t.call("GET", `${LBS}/${lb.id}/status`)).body.statuses.loadbalancer;
    expect(status.provisioning_status).toBe("ACTIVE");
    const httpStatus = status.listeners.find((l: { name: string }) => l.name === "http");
    expect(httpStatus.provisioning_status).toBe("ACTIVE");
    expect(httpStatus.pools.map((p: { name: string }) => p.name).sort()).toEqual(["api", "web"]);
    const webStatus = httpStatus.pools.find((p: { name: string }) => p.name === "web");
    expect(webStatus.members.every((m: { provisioning_status: string }) => m.provisioning_status === "ACTIVE")).toBe(true);
    expect(webStatus.health_monitor).toMatchObject({ type: "HTTP", provisioning_status: "ACTIVE", operating_status: "ONLINE" });
    const shown = (await t.call("GET", `${LBS}/${lb.id}`)).body.loadbalancer;
    expect(shown.listeners).toHaveLength(2);
    expect(shown.pools).toHaveLength(2);

    // Cascade delete removes the whole tree in one flow.
    expect((await t.call("DELETE", `${LBS}/${lb.id}?cascade=true`)).status).toBe(204);
    await t.settle();
    expect((await t.call("GET", `/v2/lbaas/listeners/${http.id}`)).status).toBe(404);
    expect((await t.call("GET", `/v2/lbaas/pools/${web.id}`)).status).toBe(404);
    expect((await t.call("GET", `/v2/lbaas/pools/${web.id}/members/${web.members[0].id}`)).status).toBe(404);
  });

  it("refuses a bad graph with Octavia's messages and writes nothing", async () => {
    const before = (await t.call("GET", LBS)).body.loadbalancers.length;
    const unnamed = graph();
    (unnamed.loadbalancer.listeners[0]!.default_pool as Record<string, unknown>).name = undefined;
    expect(pick(await t.call("POST", LBS, unnamed))).toEqual(
      fault(400, "Validation failure: Pools must be named when creating a fully populated loadbalancer."),
    );
    const dup = graph();
    dup.loadbalancer.pools[0]!.name = "web";
    expect(pick(await t.call("POST", LBS, dup))).toEqual(
      fault(400, "Validation failure: Pool names must be unique when creating a fully populated loadbalancer."),
    );
    const missing = graph();
    missing.loadbalancer.pools = [];
    expect(pick(await t.call("POST", LBS, missing))).toEqual(
      fault(400, "Validation failure: Pool 'api' was referenced but no full definition was found."),
    );
    const noAlgo = graph();
    delete (noAlgo.loadbalancer.pools[0] as Record<string, unknown>).lb_algorithm;
    expect(pick(await t.call("POST", LBS, noAlgo))).toEqual(
      fault(400, "Validation failure: Pool definition for 'api' missing required attribute: lb_algorithm"),
    );
    const clash = graph();
    clash.loadbalancer.listeners[1]!.protocol_port = 80;
    expect((await t.call("POST", LBS, clash)).status).toBe(409);
    const badMember = graph();
    badMember.loadbalancer.pools[0]!.members[0]!.protocol_port = 70000;
    expect((await t.call("POST", LBS, badMember)).status).toBe(400);
    expect((await t.call("GET", LBS)).body.loadbalancers.length).toBe(before);
  });
});

describe("load balancer answers", () => {
  it("list the LB's listeners and pools on show, list and update", async () => {
    const res = await t.call("POST", LBS, graph());
    const id = res.body.loadbalancer.id;
    await t.settle();
    const ids = (o: { listeners: { id: string }[]; pools: { id: string }[] }) => [o.listeners.length, o.pools.length];
    expect(ids((await t.call("GET", `${LBS}/${id}`)).body.loadbalancer)).toEqual([2, 2]);
    expect(ids((await t.call("GET", `${LBS}?id=${id}`)).body.loadbalancers[0])).toEqual([2, 2]);
    const updated = (await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "renamed" } })).body.loadbalancer;
    expect(ids(updated)).toEqual([2, 2]);
    expect(updated.listeners[0]).toEqual({ id: expect.any(String) });
    await t.settle();
  });
});

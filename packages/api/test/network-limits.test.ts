// A network driver's quotas (the vpc driver's: AWS's rules a security group, groups a network interface,
// OTTAVA_VPC_*) checked by the API before anything is written: a 400 with a clear message for a fully
// populated create, a listener create or update, and vip_sg_ids on a create or an update.
import { beforeAll, describe, expect, it } from "vitest";
import {
  createChild,
  createLoadBalancer,
  listenerResource,
  LoadBalancerPost,
  LoadBalancerPut,
  ListenerPost,
  noauthContext,
  parseRoot,
  updateChild,
  updateLoadBalancer,
  ListenerPut,
  type LoadBalancerDeps,
} from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { noopDrivers } from "@ottava/amphora";
import { activeLb, inProcessApp, PROJECT, SUBNET } from "@ottava/local/testing";

let t: Awaited<ReturnType<typeof inProcessApp>>;
let deps: LoadBalancerDeps;
const ctx = noauthContext("req-limits", PROJECT);
const LIMITS = { rulesPerSecurityGroup: 4, securityGroupsPerInterface: 3 };
const RULES = /^The load balancer's security group would need 5 rules .*the network allows 4 \(OTTAVA_VPC_RULES_PER_SECURITY_GROUP\)\.$/;
const GROUPS =
  "Too many VIP security groups: a VIP port holds at most 3 security groups (OTTAVA_VPC_SECURITY_GROUPS_PER_INTERFACE), and the load balancer's own group is one of them.";

beforeAll(async () => {
  t = await inProcessApp();
  deps = {
    store: t.store,
    trail: t.trail,
    catalog: t.catalog,
    engine: t.engine,
    network: { ...noopDrivers().network, limits: LIMITS },
    config: t.config,
    log: createLogger({ service: "test" }, "error"),
    metrics,
  };
});

const refusal = async (p: Promise<unknown>) => {
  const e = (await p.then(
    () => undefined,
    (x: unknown) => x,
  )) as { status?: number; message?: string } | undefined;
  return e && `${e.status} ${e.message}`;
};
const lbPost = (raw: Record<string, unknown>) => parseRoot("loadbalancer", "loadbalancer", LoadBalancerPost, { loadbalancer: raw });
const listenerPost = (raw: Record<string, unknown>) => parseRoot("listener", "listener", ListenerPost, { listener: raw });
const cidrs = ["192.0.2.0/26", "192.0.2.64/26", "192.0.2.128/26", "192.0.2.192/26"];

describe("the network driver's quotas, checked before anything is written", () => {
  it("a fully populated create whose listeners need more rules than the group holds: 400, no load balancer", async () => {
    const before = (await t.call("GET", "/v2/lbaas/loadbalancers")).body.loadbalancers.length;
    const body = lbPost({ vip_subnet_id: SUBNET, listeners: [{ protocol: "HTTP", protocol_port: 80, allowed_cidrs: cidrs }] });
    expect(await refusal(createLoadBalancer(deps, ctx, body))).toMatch(new RegExp(`^400 ${RULES.source.slice(1)}`));
    expect((await t.call("GET", "/v2/lbaas/loadbalancers")).body.loadbalancers).toHaveLength(before);
  });

  it("a listener create, then an update, past the rules: 400, the listener unchanged", async () => {
    const lb = (await activeLb(t)).id;
    expect(
      await refusal(
        createChild(
          deps,
          ctx,
          listenerResource,
          listenerPost({ loadbalancer_id: lb, protocol: "HTTP", protocol_port: 80, allowed_cidrs: cidrs }),
        ),
      ),
    ).toMatch(/^400 The load balancer's security group would need 5 rules/);
    // Three CIDRs and the peer port fit; a fourth CIDR does not.
    const { record } = await createChild(
      deps,
      ctx,
      listenerResource,
      listenerPost({ loadbalancer_id: lb, protocol: "HTTP", protocol_port: 80, allowed_cidrs: cidrs.slice(0, 3) }),
    );
    await t.settle();
    const put = parseRoot("listener", "listener", ListenerPut, { listener: { allowed_cidrs: cidrs } });
    expect(await refusal(updateChild(deps, ctx, listenerResource, record.id, put))).toMatch(
      /^400 The load balancer's security group would need 5 rules/,
    );
    expect((await t.call("GET", `/v2/lbaas/listeners/${record.id}`)).body.listener).toMatchObject({
      allowed_cidrs: cidrs.slice(0, 3),
      provisioning_status: "ACTIVE",
    });
  });

  it("vip_sg_ids beyond the groups a VIP port holds, on a create and an update: 400", async () => {
    const sg = () => crypto.randomUUID();
    expect(await refusal(createLoadBalancer(deps, ctx, lbPost({ vip_subnet_id: SUBNET, vip_sg_ids: [sg(), sg(), sg()] })))).toBe(
      `400 ${GROUPS}`,
    );
    const lb = (await activeLb(t)).id;
    const put = parseRoot("loadbalancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { vip_sg_ids: [sg(), sg(), sg()] } });
    expect(await refusal(updateLoadBalancer(deps, ctx, lb, put))).toBe(`400 ${GROUPS}`);
    // Two fit beside the LB's own.
    expect(
      (
        await updateLoadBalancer(
          deps,
          ctx,
          lb,
          parseRoot("loadbalancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { vip_sg_ids: [sg(), sg()] } }),
        )
      ).vip_sg_ids,
    ).toHaveLength(2);
  });

  it("clearing vip_sg_ids gives the listeners' ports rules again: refused if they would not fit, the LB unchanged", async () => {
    // With vip_sg_ids the listeners' ports have no rules (nor allowed_cidrs): three listeners need their 3 peer ports.
    const sg = crypto.randomUUID();
    const lb = (await activeLb(t, { fields: { vip_sg_ids: [sg] } })).id;
    for (const port of [80, 81, 82]) {
      await createChild(deps, ctx, listenerResource, listenerPost({ loadbalancer_id: lb, protocol: "TCP", protocol_port: port }));
      await t.settle();
    }
    for (const vip_sg_ids of [[], null]) {
      const put = parseRoot("loadbalancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { vip_sg_ids } });
      expect(await refusal(updateLoadBalancer(deps, ctx, lb, put))).toMatch(/^400 The load balancer's security group would need 6 rules/);
    }
    expect((await t.store.getLoadBalancer(lb))!.record).toMatchObject({ vip_sg_ids: [sg], provisioning_status: "ACTIVE" });
  });

  it("a listener update that leaves allowed_cidrs alone is not counted (a quota lowered since)", async () => {
    const lb = (await activeLb(t)).id;
    const { record } = await createChild(
      deps,
      ctx,
      listenerResource,
      listenerPost({ loadbalancer_id: lb, protocol: "HTTP", protocol_port: 80, allowed_cidrs: cidrs.slice(0, 3) }),
    );
    await t.settle();
    const lowered = { ...deps, network: { ...deps.network, limits: { ...LIMITS, rulesPerSecurityGroup: 2 } } };
    const rename = parseRoot("listener", "listener", ListenerPut, { listener: { name: "renamed" } });
    expect((await updateChild(lowered, ctx, listenerResource, record.id, rename)).record).toMatchObject({ name: "renamed" });
    await t.settle();
    const narrow = parseRoot("listener", "listener", ListenerPut, { listener: { allowed_cidrs: cidrs.slice(0, 2) } });
    expect(await refusal(updateChild(lowered, ctx, listenerResource, record.id, narrow))).toMatch(
      /^400 The load balancer's security group would need 3 rules/,
    );
  });
});

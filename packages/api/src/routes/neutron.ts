// /network: the Neutron look-ups clients make when a user names a subnet, network, port or security group
// (Neutron's v2.0 API, GET only), answered from the VPC with OTTAVA_NETWORK_DRIVER=vpc (@ottava/aws's
// NeutronLookups, loaded at the first look-up). Operators register <api url>/network as the `network`
// service in Keystone's catalog (docs/deploying.md).
import { Hono, type Context } from "hono";
import { Fault } from "@ottava/core";
import { loadNeutronLookups, type NeutronKind } from "@ottava/amphora/api-drivers";
import type { ApiDeps } from "../deps";
import { queryPairs } from "../http";
import type { Env } from "../middleware/context";

const KINDS: readonly NeutronKind[] = ["subnets", "networks", "ports", "security-groups"];
const RESOURCES = { subnets: "subnet", networks: "network", ports: "port", "security-groups": "security_group" } as const;

/** The URL of this router's root (…/network), as the client reached it. */
function rootOf(c: Context<Env>): string {
  const url = new URL(c.req.url);
  return `${url.origin}${url.pathname.replace(/\/v2\.0(\/.*)?$/, "").replace(/\/+$/, "")}`;
}

export function neutronRoutes(deps: ApiDeps) {
  const lookups = loadNeutronLookups(deps.config, deps.cloudIds);
  const caller = (c: Context<Env>) => ({ projectId: c.get("ctx").projectId, isAdmin: c.get("ctx").isAdmin });
  /** The collection asked for; another path is unknown (the app's 404). */
  const kind = (c: Context<Env>): NeutronKind => {
    const k = c.req.param("kind") as NeutronKind;
    if (!KINDS.includes(k)) throw new Fault(404, "The resource could not be found.");
    return k;
  };
  return (
    new Hono<Env>()
      // Neutron's version document (its root), for keystoneauth's discovery.
      .get("/", (c) => c.json({ versions: [{ id: "v2.0", status: "CURRENT", links: [{ href: `${rootOf(c)}/v2.0/`, rel: "self" }] }] }))
      .get("/v2.0", (c) =>
        c.json({
          resources: KINDS.map((k) => ({
            name: RESOURCES[k],
            collection: k.replace("-", "_"),
            links: [{ href: `${rootOf(c)}/v2.0/${k}`, rel: "self" }],
          })),
        }),
      )
      .get("/v2.0/:kind", async (c) => {
        const k = kind(c);
        return c.json({ [k.replace("-", "_")]: await (await lookups()).list(k, caller(c), queryPairs(c)) });
      })
      .get("/v2.0/:kind/:id", async (c) => {
        const k = kind(c);
        const l = await lookups();
        const id = c.req.param("id");
        const fields = queryPairs(c)
          .filter(([k]) => k === "fields")
          .flatMap(([, v]) => v.split(","));
        const item = await l.get(k, caller(c), id, fields);
        return item ? c.json({ [RESOURCES[k]]: item }) : c.json(l.notFound(k, id), 404);
      })
  );
}

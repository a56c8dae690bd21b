// A stand-in for the Neutron and Keystone look-ups python-octaviaclient makes under `auth_type: none`
// (`npm start -- --cli-standin`, and the CLI tests). Without a cloud, the CLI sends every
// non-load-balancer request to the one `auth.endpoint`; this server answers those, echoing any id or
// name as an existing object, and records what it was asked.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface StandIn {
  url: string;
  /** "METHOD path?query" of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A stable UUID for a name, so a look-up by name answers the same object every time. */
export function idFor(nameOrId: string): string {
  if (UUID.test(nameOrId)) return nameOrId;
  const h = createHash("sha1").update(nameOrId).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const NETWORK_ID = "2d6e1b5c-3f4a-4b8e-9c1d-7a0e5f6b8c90";

// Neutron collections: plural key → builder of one object from its id and name.
const neutron: Record<string, { key: string; make: (id: string, name: string) => Record<string, unknown> }> = {
  "/v2.0/subnets": {
    key: "subnets",
    make: (id, name) => ({
      id,
      name,
      network_id: NETWORK_ID,
      ip_version: 4,
      cidr: "198.51.100.0/24",
      gateway_ip: "198.51.100.254",
      enable_dhcp: true,
      project_id: "standin",
      tenant_id: "standin",
    }),
  },
  "/v2.0/networks": {
    key: "networks",
    make: (id, name) => ({ id, name, status: "ACTIVE", admin_state_up: true, subnets: [], project_id: "standin", tenant_id: "standin" }),
  },
  "/v2.0/ports": {
    key: "ports",
    make: (id, name) => ({
      id,
      name,
      network_id: NETWORK_ID,
      status: "ACTIVE",
      admin_state_up: true,
      fixed_ips: [],
      project_id: "standin",
      tenant_id: "standin",
    }),
  },
  "/v2.0/qos/policies": {
    key: "policies",
    make: (id, name) => ({ id, name, rules: [], shared: false, project_id: "standin", tenant_id: "standin" }),
  },
};

function project(idOrName: string) {
  return {
    id: idOrName,
    name: idOrName,
    domain_id: "default",
    enabled: true,
    is_domain: false,
    parent_id: "default",
    description: "",
    links: {},
  };
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function handle(req: IncomingMessage, res: ServerResponse, base: string) {
  const url = new URL(req.url ?? "/", base);
  const path = url.pathname.replace(/\/+$/, "").replace(/\.json$/, "") || "/";
  const q = url.searchParams;
  if (req.method !== "GET") return send(res, 405, { error: { code: 405, message: `${req.method} not supported by the stand-in` } });

  // Version discovery, should keystoneauth ask.
  if (path === "/") {
    return send(res, 300, {
      versions: {
        values: [{ id: "v3.14", status: "stable", links: [{ rel: "self", href: `${base}/v3/` }], "media-types": [] }],
      },
    });
  }
  if (path === "/v3") {
    return send(res, 200, { version: { id: "v3.14", status: "stable", links: [{ rel: "self", href: `${base}/v3/` }], "media-types": [] } });
  }
  if (path === "/v2.0") return send(res, 200, { resources: [] });

  const coll = neutron[path];
  if (coll) {
    const ids = q.getAll("id");
    const names = q.getAll("name");
    const items = ids.length ? ids.map((id) => coll.make(id, names[0] ?? id)) : names.map((name) => coll.make(idFor(name), name));
    return send(res, 200, { [coll.key]: items });
  }
  const one = /^\/v2\.0\/(subnets|networks|ports|qos\/policies)\/([^/]+)$/.exec(path);
  if (one) {
    const c = neutron[`/v2.0/${one[1]}`]!;
    const id = decodeURIComponent(one[2]!);
    return send(res, 200, { [c.key.replace(/ies$/, "y").replace(/s$/, "")]: c.make(id, id) });
  }

  // Keystone v3. With `auth_type: none` keystoneclient uses the endpoint as its base URL as it is,
  // so the look-ups arrive without the /v3 prefix; both forms are answered.
  const keystone = path.replace(/^\/v3(?=\/)/, "");
  if (keystone === "/projects") {
    const names = q.getAll("name");
    return send(res, 200, { projects: names.map(project), links: { self: `${base}/v3/projects`, next: null, previous: null } });
  }
  const proj = /^\/projects\/([^/]+)$/.exec(keystone);
  if (proj) return send(res, 200, { project: project(decodeURIComponent(proj[1]!)) });

  return send(res, 404, { error: { code: 404, title: "Not Found", message: `the stand-in does not know ${path}` } });
}

export async function startStandIn(port = 0, host = "127.0.0.1"): Promise<StandIn> {
  const requests: string[] = [];
  let base = "";
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => handle(req, res, base));
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, ok);
  });
  base = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

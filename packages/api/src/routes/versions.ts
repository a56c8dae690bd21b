// Version discovery (octavia/api/root_controller.py, Octavia master): GET / lists v2.0 to v2.30, v2.30
// CURRENT (v2.27 HSTS, v2.28 SR-IOV VIP vnic_type, v2.29 VIP security groups, v2.30 SR-IOV member ports).
import { Hono } from "hono";
import type { Env } from "../middleware/context";

const VERSIONS: [string, string][] = [
  ["v2.0", "2016-12-11T00:00:00Z"],
  ["v2.1", "2018-04-20T00:00:00Z"],
  ["v2.2", "2018-07-31T00:00:00Z"],
  ["v2.3", "2018-12-18T00:00:00Z"],
  ["v2.4", "2018-12-19T00:00:00Z"],
  ["v2.5", "2019-01-21T00:00:00Z"],
  ["v2.6", "2019-01-25T00:00:00Z"],
  ["v2.7", "2018-01-25T12:00:00Z"],
  ["v2.8", "2019-02-12T00:00:00Z"],
  ["v2.9", "2019-03-04T00:00:00Z"],
  ["v2.10", "2019-03-05T00:00:00Z"],
  ["v2.11", "2019-06-24T00:00:00Z"],
  ["v2.12", "2019-09-11T00:00:00Z"],
  ["v2.13", "2019-09-13T00:00:00Z"],
  ["v2.14", "2019-11-10T00:00:00Z"],
  ["v2.15", "2020-03-10T00:00:00Z"],
  ["v2.16", "2020-03-15T00:00:00Z"],
  ["v2.17", "2020-04-29T00:00:00Z"],
  ["v2.18", "2020-04-29T01:00:00Z"],
  ["v2.19", "2020-05-12T00:00:00Z"],
  ["v2.20", "2020-08-02T00:00:00Z"],
  ["v2.21", "2020-09-03T00:00:00Z"],
  ["v2.22", "2020-09-04T00:00:00Z"],
  ["v2.23", "2020-09-07T00:00:00Z"],
  ["v2.24", "2020-10-15T00:00:00Z"],
  ["v2.25", "2021-10-02T00:00:00Z"],
  ["v2.26", "2022-08-29T00:00:00Z"],
  ["v2.27", "2023-05-05T00:00:00Z"],
  ["v2.28", "2023-11-08T00:00:00Z"],
  ["v2.29", "2024-10-15T00:00:00Z"],
  ["v2.30", "2025-02-26T00:00:00Z"],
];

export const versionRoutes = new Hono<Env>().get("/", (c) => {
  const url = new URL(c.req.url);
  const base = `${url.origin}${url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`}`;
  return c.json({
    versions: VERSIONS.map(([id, updated], i) => ({
      id,
      status: i === VERSIONS.length - 1 ? "CURRENT" : "SUPPORTED",
      updated,
      links: [{ href: `${base}v2`, rel: "self" }],
    })),
  });
});

/** GET /v2 and /v2.0 answer the JSON string "v2", as Octavia's BaseV2Controller. */
export const v2Index = new Hono<Env>().get("/", (c) => c.json("v2"));

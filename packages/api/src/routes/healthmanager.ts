// /v2/octavia/healthmanager: the health-manager addresses amphora agents send heartbeats to
// ([health_manager] controller_ip_port_list), read and changed by admins; a change is pushed to
// every amphora by the healthmanager-refresh flow.
import { Hono } from "hono";
import { getHealthManager, putHealthManager } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody } from "../http";
import type { Env } from "../middleware/context";

export function healthManagerRoutes(deps: ApiDeps) {
  return new Hono<Env>()
    .get("/", async (c) => c.json(await getHealthManager({ ...deps, log: c.get("log") }, c.get("ctx"))))
    .put("/", async (c) => c.json(await putHealthManager({ ...deps, log: c.get("log") }, c.get("ctx"), await jsonBody(c)), 202));
}

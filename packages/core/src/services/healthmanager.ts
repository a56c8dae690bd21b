// The health-manager addresses the amphora agents send heartbeats to ([health_manager]
// controller_ip_port_list), as admins read and change them at /v2/octavia/healthmanager. Each change
// bumps the configuration's generation (a conditional write on the generation read, so concurrent
// changes never lose one) and starts a refresh flow that pushes it to every amphora; no LB is locked.
import * as z from "zod";
import type { Config } from "../config";
import { Fault } from "../faults";
import type { HealthManagerConfig, HealthManagerConfigStore } from "../ports";
import { authorize, type RequestContext } from "../policy";
import { parseRoot } from "../validation";
import type { LockDeps } from "./lock";

export const HEALTHMANAGER_REFRESH_FLOW = "healthmanager-refresh";
const LIST = "controller_ip_port_list";
/** How many times a change is re-read and tried again when a concurrent change moved the generation. */
const MAX_ATTEMPTS = 50;

export type HealthManagerDeps = LockDeps & { config: Config; healthManagerConfig: HealthManagerConfigStore };

/** "ip:port": IPv4 or [IPv6], port 1..65535. */
export function isIpPort(v: string): boolean {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(v);
  if (!m) return false;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return false;
  return m[1] !== undefined ? z.ipv6().safeParse(m[1]).success : z.ipv4().safeParse(m[2]).success;
}

const ipPort = z.string({ error: "Value should be string" }).refine(isIpPort, {
  error: "Value should be an IPv4 address and port (ip:port) or a bracketed IPv6 address and port ([ip]:port), port 1..65535",
});
const ipPortList = z
  .array(ipPort, { error: "Value should be a list" })
  .min(1, { error: "Value should have at least one health manager address" })
  .transform((l) => [...new Set(l)]);

/** The stored configuration, or the settings' initial one (generation 0). */
export async function currentHealthManagerConfig(deps: {
  healthManagerConfig: HealthManagerConfigStore;
  config: Config;
}): Promise<HealthManagerConfig> {
  return (
    (await deps.healthManagerConfig.getHealthManagerConfig()) ?? {
      controller_ip_port_list: [...deps.config.controllerIpPortList],
      generation: 0,
      refresh: { total: 0, done: 0, failed: 0 },
    }
  );
}

export const refreshExecutionName = (generation: number) => `healthmanager-refresh-g${generation}`;

/** GET /v2/octavia/healthmanager. */
export async function getHealthManager(deps: HealthManagerDeps, ctx: RequestContext): Promise<HealthManagerConfig> {
  authorize(ctx, "os_load-balancer_api:healthmanager:get", ctx.projectId);
  return currentHealthManagerConfig(deps);
}

/** PUT /v2/octavia/healthmanager: 202; stores the new list as the next generation and starts its refresh. */
export async function putHealthManager(deps: HealthManagerDeps, ctx: RequestContext, raw: unknown): Promise<HealthManagerConfig> {
  authorize(ctx, "os_load-balancer_api:healthmanager:put", ctx.projectId);
  const list = parseRoot("healthmanager", LIST, ipPortList, raw) as string[];
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const current = await currentHealthManagerConfig(deps);
    if (await deps.healthManagerConfig.putHealthManagerConfig(list, current.generation)) {
      const generation = current.generation + 1;
      const name = refreshExecutionName(generation);
      try {
        await deps.engine.start(HEALTHMANAGER_REFRESH_FLOW, name, { generation });
      } catch (e) {
        deps.log.error("health manager refresh flow could not start", { generation, error: String(e) });
        throw new Fault(500, "Unable to start the amphora agent configuration refresh.");
      }
      deps.log.info("flow started", { flow: HEALTHMANAGER_REFRESH_FLOW, execution: name, generation });
      return { controller_ip_port_list: list, generation, refresh: { total: 0, done: 0, failed: 0 } };
    }
    // Another change won: read its generation and try again on top of it.
    await new Promise((r) => setTimeout(r, Math.random() * 10 * Math.min(attempt, 5)));
  }
  throw new Fault(409, "The health manager configuration is being changed concurrently; please retry the request.");
}

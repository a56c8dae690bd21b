// Health-manager configuration refresh: pushes the current controller_ip_port_list to every amphora,
// one page of the amphora list per task invocation, a bounded number of amphorae at a time. Takes no
// lock and never touches an LB's provisioning_status: each amphora gets a plain conditional update
// (agent_generation, agent_config_at); the progress is counted on the configuration item.
import { currentHealthManagerConfig, DELETED, type Amphora } from "@ottava/core";
import { renderAgentConfig } from "@ottava/amphora";
import type { TaskContext, TaskHandler } from "./context";

/** Amphorae of a page refreshed at the same time. */
const PAGE_CONCURRENCY = 10;
/** Driver calls per amphora before it counts as failed (the first and two retries). */
const ATTEMPTS = 3;
const RETRY_DELAY_MS = 100;

type AgentAmphora = Amphora & { agent_generation?: number };
type Outcome = "done" | "failed" | "skipped";

/** What a refresh pushes: its generation's health-manager addresses, rendered into each amphora's file. */
interface AgentPush {
  controller_ip_port_list: string[];
  generation: number;
}

/**
 * The amphora's amphora-agent.conf, as Octavia's AmphoraConfigUpdate renders it (build_agent_config):
 * these health-manager addresses, its load balancer's topology (the settings' default if the LB is
 * gone), the heartbeat key and interval and the agent's API port (the other settings are Octavia's
 * defaults, AGENT_CONFIG_DEFAULTS). Secret (the key): never log it, never return it from a task.
 * `topologies` keeps the LBs' topologies read for a page of amphorae.
 */
export async function renderAmphoraAgentConfig(
  ctx: TaskContext,
  a: Amphora,
  controllerIpPortList: string[],
  topologies = new Map<string, Promise<string>>(),
): Promise<string> {
  let topology = topologies.get(a.loadbalancer_id);
  if (!topology) {
    topology = ctx.store.getLoadBalancer(a.loadbalancer_id).then(
      (lb) => lb?.record.topology ?? ctx.config.loadbalancerTopology,
      (e: unknown) => {
        topologies.delete(a.loadbalancer_id); // a failed read is not kept: the retry reads again
        throw e;
      },
    );
    topologies.set(a.loadbalancer_id, topology);
  }
  return renderAgentConfig(
    { amphora: a, topology: await topology, controllerIpPortList, heartbeatKey: ctx.config.heartbeatKey ?? null },
    { heartbeatInterval: ctx.config.heartbeatInterval, bindPort: ctx.config.amphoraAgentPort },
  );
}

/** What the flow's state carries between pages: the generation it pushes and where the next page starts. */
interface RefreshState {
  generation: number;
  marker: string | null;
  more: boolean;
}

async function inPool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const k = next++;
      out[k] = await fn(items[k]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

async function refreshOne(ctx: TaskContext, a: AgentAmphora, agent: AgentPush, topologies: Map<string, Promise<string>>): Promise<Outcome> {
  if ((a.agent_generation ?? -1) >= agent.generation) return "done"; // built with it, or a retried page
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.drivers.amphora.updateAgentConfig(a, await renderAmphoraAgentConfig(ctx, a, agent.controller_ip_port_list, topologies));
      break;
    } catch (e) {
      if (attempt < ATTEMPTS) {
        await new Promise((r) => setTimeout(r, RETRY_DELAY_MS * attempt));
        continue;
      }
      const now = await ctx.store.getAmphora(a.id);
      if (!now || now.status === DELETED) return "skipped"; // deleted meanwhile: nothing to refresh
      ctx.log.warn("amphora agent configuration refresh failed", { amphoraId: a.id, generation: agent.generation, error: String(e) });
      return "failed";
    }
  }
  if (await ctx.healthManagerConfig.recordAmphoraAgentGeneration(a.loadbalancer_id, a.id, agent.generation, new Date().toISOString()))
    return "done";
  const now = (await ctx.store.getAmphora(a.id)) as AgentAmphora | undefined;
  return !now || now.status === DELETED ? "skipped" : "done"; // else it already has a newer generation
}

/** One page of the amphora list (byShard index, storage order), resumed after `marker`. */
const refreshAgentConfigPage: TaskHandler = async (input, ctx) => {
  const generation = Number(input.generation);
  const prev = (input.page ?? input) as Partial<RefreshState>; // the previous page's answer, or the flow's input
  const marker = typeof prev.marker === "string" && prev.marker ? prev.marker : undefined;
  const stop: RefreshState = { generation, marker: null, more: false };
  const cfg = await currentHealthManagerConfig(ctx);
  if (cfg.generation !== generation) {
    ctx.log.info("health manager refresh superseded by a newer generation", { generation, current: cfg.generation });
    return stop;
  }
  const agent: AgentPush = { controller_ip_port_list: cfg.controller_ip_port_list, generation };
  const topologies = new Map<string, Promise<string>>();
  const size = ctx.config.healthManagerRefreshPageSize;
  const page: AgentAmphora[] = [];
  let read = 0;
  let last: string | undefined;
  for await (const item of ctx.store.amphorae(undefined)("asc", marker)) {
    const a = item as unknown as AgentAmphora;
    last = a.id;
    if (a.status !== DELETED) page.push(a);
    if (++read >= size) break;
  }
  const outcomes = await inPool(page, PAGE_CONCURRENCY, (a) => refreshOne(ctx, a, agent, topologies));
  const failedIds = page.filter((_, i) => outcomes[i] === "failed").map((a) => a.id);
  const done = outcomes.filter((o) => o === "done").length;
  if (failedIds.length > 0) ctx.log.error("amphorae whose agent configuration could not be refreshed", { generation, amphorae: failedIds });
  // Counted once per page (keyed by where it starts), however many times this task runs for it.
  const counted = await ctx.healthManagerConfig.addHealthManagerRefresh(
    generation,
    { total: done + failedIds.length, done, failed: failedIds.length },
    marker ?? "^",
  );
  if (!counted) {
    ctx.log.info("health manager refresh superseded by a newer generation", { generation });
    return stop;
  }
  const next: RefreshState = { generation, marker: last ?? null, more: read >= size && last !== undefined };
  if (!next.more) ctx.log.info("health manager refresh finished", { generation });
  return next;
};

const logHealthManagerRefreshFailure: TaskHandler = async (input, ctx) => {
  ctx.log.error("health manager refresh flow failed", { generation: input.generation, marker: input.marker, error: input.error });
  return null;
};

/** The tasks this module adds to the registry (only these: its helpers are not tasks). */
export const HEALTHMANAGER_TASKS: Record<string, TaskHandler> = { refreshAgentConfigPage, logHealthManagerRefreshFailure };

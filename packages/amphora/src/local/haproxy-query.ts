// HAProxy's stats socket, as Octavia's HAProxyQuery (octavia/amphorae/backends/utils/haproxy_query.py):
// one command a connection (`show stat`, `show info`), its CSV read as Python's csv.DictReader reads it,
// and get_pool_status. The heartbeat sender (heartbeat.ts) reads it each beat; the amphora host (host.ts)
// saves HAProxy's server state through it before a reload.
import { createConnection } from "node:net";

/** A `show stat` row: CSV column name → value, as csv.DictReader makes it. */
export type StatRow = Record<string, string>;

/** get_pool_status's answer per HAProxy backend name ("<pool id>:<listener id>"). */
export interface PoolStatus {
  pool_uuid: string;
  listener_uuid: string;
  /** The BACKEND's status: "UP" (working servers, or none) or "DOWN". */
  status: string;
  /** Server name (the member id) → HAProxy's status: "UP", "DOWN", "UP 1/3", "DRAIN", "MAINT", "no check", ... */
  members: Record<string, string>;
}

/** How long one stats socket query may take (Octavia's has no limit; a hung HAProxy must not stop the beats). */
const QUERY_TIMEOUT_MS = 5000;

/**
 * HAProxyQuery._query: sends one command to HAProxy's stats socket and answers what it printed
 * before closing the connection, trailing whitespace removed. Fails if the socket does not answer.
 */
export function haproxyQuery(socketPath: string, command: string, timeoutMs = QUERY_TIMEOUT_MS): Promise<string> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    const conn = createConnection(socketPath);
    conn.setTimeout(timeoutMs, () => conn.destroy(new Error(`HAProxy '${command}' query timed out.`)));
    conn.on("connect", () => conn.write(`${command}\n`));
    conn.on("data", (d) => chunks.push(d));
    conn.on("error", (e) => fail(new Error(`HAProxy '${command}' query failed.`, { cause: e })));
    conn.on("close", (hadError) => {
      if (!hadError) ok(Buffer.concat(chunks).toString("latin1").trimEnd());
    });
  });
}

/** One CSV line as Python's csv module reads it (excel dialect: "," and "\"", doubled quotes). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = "";
  let quoted = false;
  let atStart = true;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"') {
        if (line[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === ",") {
      out.push(field);
      field = "";
      atStart = true;
      continue;
    } else if (c === '"' && atStart) quoted = true;
    else field += c;
    atStart = false;
  }
  out.push(field);
  return out;
}

/**
 * show_stat's parsing of `show stat` output: the "# " before the header dropped, each line a
 * csv.DictReader row (blank lines skipped), the proxies whose name holds "prometheus" left out.
 */
export function parseShowStat(output: string): StatRow[] {
  const lines = output.slice(2).split("\n");
  const header = csvFields(lines[0] ?? "");
  const rows: StatRow[] = [];
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    const values = csvFields(line);
    const row: StatRow = {};
    header.forEach((name, i) => {
      if (values[i] !== undefined) row[name] = values[i]!;
    });
    rows.push(row);
  }
  return rows.filter((r) => !(r.pxname ?? "").includes("prometheus"));
}

/** HAProxyQuery.show_stat: `show stat <proxy iid> <object type> <server id>` (-1: all; object types 1 frontends, 2 backends, 4 servers, ORed). */
export async function showStat(socketPath: string, proxyIid = -1, objectType = -1, serverId = -1): Promise<StatRow[]> {
  return parseShowStat(await haproxyQuery(socketPath, `show stat ${proxyIid} ${objectType} ${serverId}`));
}

/** HAProxyQuery.show_info: `show info` as name → value (e.g. Pid, Uptime_sec, CurrConns). */
export async function showInfo(socketPath: string): Promise<Record<string, string>> {
  const info: Record<string, string> = {};
  for (const line of (await haproxyQuery(socketPath, "show info")).split("\n")) {
    const i = line.indexOf(":");
    if (i >= 0) info[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return info;
}

/**
 * get_pool_status over `show stat -1 6 -1` rows (backends and servers): per backend its status and
 * its servers'. A server UP with weight 0 is DRAIN (Octavia's work-around for HAProxy versions
 * that report drained servers as UP). A BACKEND whose name is not "<pool id>:<listener id>" fails, as
 * Octavia's `pool_id, listener_id = pxname.split(':')` does.
 */
export function poolStatusOf(rows: readonly StatRow[]): Record<string, PoolStatus> {
  const pools: Record<string, Partial<PoolStatus> & { members: Record<string, string> }> = {};
  for (const line of rows) {
    const name = line.pxname ?? "";
    if (name.includes("prometheus")) continue;
    const pool = (pools[name] ??= { members: {} });
    if (line.svname === "BACKEND") {
      const parts = name.split(":");
      if (parts.length !== 2) throw new Error(`HAProxy backend '${name}' is not named <pool id>:<listener id>`);
      pool.pool_uuid = parts[0]!;
      pool.listener_uuid = parts[1]!;
      pool.status = line.status ?? "";
    } else {
      const status = line.status === "UP" && line.weight === "0" ? "DRAIN" : (line.status ?? "");
      pool.members[line.svname ?? ""] = status;
    }
  }
  return pools as Record<string, PoolStatus>;
}

// The local amphora driver: what Octavia's haproxy amphora driver (amphorae/drivers/haproxy/rest_api_driver.py update_amphora_listeners, post_vip_plug, start_vrrp_service, update_amphora_agent_config, upload_cert_amp) and the amphora agent do, done on this machine's amphora directories (AmphoraHost).
//
// Every amphora of the load balancer gets its rendered haproxy.cfg and certificates (the same
// renderer as a real amphora's); the MASTER or STANDALONE one serves it with HAProxy and sends
// heartbeats; an ACTIVE_STANDBY BACKUP keeps the files only (there is no VRRP here to move the VIP
// to it: its keepalived.conf is written, not run). UDP and SCTP listeners (keepalived's LVS, which
// needs the kernel's IPVS) are rendered to files and not served.
import { createHmac, randomBytes } from "node:crypto";
import {
  AMPHORA_ALLOCATED,
  LVS_PROTOCOLS,
  PENDING_DELETE,
  ROLE_BACKUP,
  TOPOLOGY_ACTIVE_STANDBY,
  Tree,
  type Amphora,
  type AmphoraDriver,
  type CertManager,
  type Listener,
  type LoadBalancer,
  type LoadBalancerStore,
  type Logger,
} from "@ottava/core";
import { haproxyListeners, haproxyPeerName, renderHaproxyConfig } from "../render/haproxy";
import { newVrrpGroup, renderKeepalivedConfig, type AmphoraNetworkConfig } from "../render/keepalived";
import { renderLvsConfig } from "../render/lvs";
import type { AmphoraHost } from "./host";
import type { AddressRange } from "./network";
import { tlsFiles } from "./tls-files";

/** Where the amphora agent keeps keepalived's files (under base_path). */
const KEEPALIVED_CONF = "vrrp/octavia-keepalived.conf";
const lvsConf = (listenerId: string) => `lvs/octavia-keepalivedlvs-${listenerId}.conf`;
const AGENT_CONF = "amphora-agent.conf";

/** [health_manager] controller_ip_port_list of an amphora-agent.conf. */
const controllersOf = (conf: string) =>
  (agentConfigValue(conf, "health_manager", "controller_ip_port_list") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export interface LocalAmphoraDriverOptions {
  host: AmphoraHost;
  /** The table: a new amphora (create, failover) is configured from its load balancer's tree as stored. */
  store: LoadBalancerStore;
  certificates: CertManager;
  /** [health_manager] controller_ip_port_list as it is now (the table's, else the setting's): what a new amphora's agent starts with. */
  controllers: () => Promise<readonly string[]>;
  /** The VIP range: the "subnet" keepalived.conf names. */
  range: AddressRange;
  /** What VRRP passwords are derived from (the heartbeat key); a random one without it. Secret. */
  secret: string | undefined;
  log: Logger;
}

/** A value of amphora-agent.conf as oslo.config reads it: `key = value` in `[section]`, quotes removed, "$$" as "$". */
export function agentConfigValue(conf: string, section: string, key: string): string | undefined {
  let current = "";
  for (const raw of conf.split("\n")) {
    const line = raw.trim();
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      current = head[1]!;
      continue;
    }
    if (current !== section) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (!m || m[1] !== key) continue;
    let value = m[2]!;
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    return value.replace(/\$\$/g, "$");
  }
  return undefined;
}

export class LocalAmphoraDriver implements AmphoraDriver {
  private readonly secret: string;
  private readonly lvsNoticed = new Set<string>();

  constructor(private readonly opts: LocalAmphoraDriverOptions) {
    this.secret = opts.secret ?? randomBytes(24).toString("hex");
  }

  /**
   * post_vip_plug: a loopback VIP needs no interface set up. A new amphora (create, failover) is
   * configured here with its load balancer's tree as stored, so it serves at once (Octavia's flows push
   * the listeners to a new amphora after this), and one that serves starts its heartbeats.
   */
  async postVipPlug(lb: LoadBalancer, amphora: Amphora): Promise<void> {
    const { lb: current, items } = await this.opts.store.tree(lb.id);
    if (!current) return;
    const tree = new Tree(
      current.record,
      items.filter((i) => i.record.provisioning_status !== PENDING_DELETE),
    );
    const amphorae = await this.opts.store.amphoraeOf(lb.id);
    await this.apply(tree, amphora, amphorae);
  }

  /** post_network_plug: nothing to configure: HAProxy runs on this host's loopback and reaches every member address already. */
  async postNetworkPlug(): Promise<void> {}

  /** update_amphora_listeners: every amphora gets the configuration; those that serve reload (or start, or stop when no listener is left). */
  async update(tree: Tree, amphorae: Amphora[]): Promise<void> {
    for (const amphora of amphorae) await this.apply(tree, amphora, amphorae);
  }

  /**
   * start_vrrp_service: each amphora's keepalived.conf is written (nothing runs it here), and the
   * configurations are rendered again, since the peers of ACTIVE_STANDBY's stick tables are the
   * allocated amphorae.
   */
  async startVrrp(tree: Tree, amphorae: Amphora[]): Promise<void> {
    if (tree.lb.topology !== TOPOLOGY_ACTIVE_STANDBY) return;
    const lb = tree.lb;
    const subnet = { cidr: this.opts.range.cidr, gateway_ip: null, host_routes: [] };
    const network: AmphoraNetworkConfig = {
      vip_subnet: subnet,
      additional_vip_data: (lb.additional_vips ?? []).map((v) => ({ ip_address: v.ip_address, subnet })),
    };
    const authPass = createHmac("sha256", this.secret).update(`vrrp/${lb.id}`).digest("hex").slice(0, 8);
    const vrrpGroup = newVrrpGroup(lb.id, authPass);
    for (const amphora of amphorae) {
      if (amphora.status !== AMPHORA_ALLOCATED) continue;
      const conf = renderKeepalivedConfig({ lb, amphora, amphorae, vrrpGroup, network });
      await this.opts.host.putFile(amphora.id, KEEPALIVED_CONF, conf, true);
    }
    await this.update(tree, amphorae);
  }

  /**
   * update_amphora_agent_config: amphora-agent.conf replaced (0600: it holds the heartbeat key), and
   * read back as the agent would: its heartbeats go to the [health_manager] controller_ip_port_list
   * from now on (to the local receiver when it is empty).
   */
  async updateAgentConfig(amphora: Amphora, agentConfig: string): Promise<void> {
    await this.opts.host.putFile(amphora.id, AGENT_CONF, agentConfig, true);
    await this.opts.host.setControllers(amphora.id, controllersOf(agentConfig));
  }

  /** upload_cert_amp: the agent's certificate and key replaced (0600). */
  async uploadCert(amphora: Amphora, pem: string): Promise<void> {
    await this.opts.host.putServerPem(amphora.id, pem);
  }

  /** One amphora's configuration of `tree`: rendered, written, and served when its role serves. */
  private async apply(tree: Tree, amphora: Amphora, amphorae: readonly Amphora[]): Promise<void> {
    const { host } = this.opts;
    const lb = tree.lb;
    const serves = amphora.role !== ROLE_BACKUP;
    await this.writeLvs(tree, amphora);
    if (haproxyListeners(tree).length === 0) {
      await host.unserve(amphora.id, lb.id);
    } else {
      const paths = await host.paths(amphora.id);
      const tls = await tlsFiles(tree, this.opts.certificates, paths.certDir);
      const config = renderHaproxyConfig({
        tree,
        amphora,
        amphorae,
        haproxyVersion: host.haproxyVersion,
        certs: tls.paths,
        // HAProxy's own messages and its connection logs go to its stderr: <amphora dir>/haproxy.log.
        settings: { base_path: paths.basePath, base_cert_dir: paths.certDir, log_http: "stderr", log_server: "stderr" },
      });
      const payload = { lbId: lb.id, config, certs: tls.files, localPeer: haproxyPeerName(amphora.id) };
      if (serves) await host.serve(amphora.id, payload);
      else await host.standby(amphora.id, payload);
    }
    if (serves) {
      // The agent starts with the controllers of its configuration file (one pushed before a restart),
      // else those of now, as a new amphora's config drive has them.
      if (!host.heartbeating(amphora.id)) {
        const conf = await host.getFile(amphora.id, AGENT_CONF);
        await host.setControllers(amphora.id, conf !== undefined ? controllersOf(conf) : await this.opts.controllers());
      }
      await host.startHeartbeats(amphora.id, lb.id);
    } else {
      await host.stopHeartbeats(amphora.id);
    }
  }

  /** The UDP and SCTP listeners' keepalived LVS files, exactly those of `tree`. */
  private async writeLvs(tree: Tree, amphora: Amphora): Promise<void> {
    const lvs = tree.of<Listener>("listener").filter((l) => LVS_PROTOCOLS.includes(l.protocol));
    const files: Record<string, string> = {};
    for (const l of lvs) {
      files[lvsConf(l.id)] = renderLvsConfig(tree, l.id, { basePath: (await this.opts.host.paths(amphora.id)).basePath });
      if (!this.lvsNoticed.has(l.id)) {
        this.lvsNoticed.add(l.id);
        this.opts.log.warn("UDP and SCTP listeners are rendered but not served locally (keepalived's LVS needs the kernel's IPVS)", {
          listenerId: l.id,
          protocol: l.protocol,
          file: lvsConf(l.id),
        });
      }
    }
    await this.opts.host.syncFiles(amphora.id, "lvs", files);
  }
}

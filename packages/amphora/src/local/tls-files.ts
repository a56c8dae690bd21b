// The certificate files an amphora's HAProxy reads, as Octavia's amphora driver builds and uploads them (amphorae/drivers/haproxy/rest_api_driver.py _process_tls_certificates, _process_secret, _process_listener_pool_certs, _process_pool_certs; common/tls_utils/cert_parser.py build_pem, prepare_private_key).
//
// Under <base_cert_dir>/<lb id>/: each certificate as `<SHA-1 of its certificate PEM>.pem` (the
// certificate, its key without a passphrase, its intermediates), each listener's crt-list as
// `<listener id>.pem` (the paths of its default certificate, then its SNI certificates), each secret
// (client CA, CRL) as `<SHA-1 of the secret>.pem`. Contents are secret: never logged.
import { DriverError, type CertManager, type L7Policy, type Listener, type Pool, type Tree } from "@ottava/core";
import { haproxyListeners, type HaproxyCertPaths, type HaproxyListenerCerts, type HaproxyPoolCerts } from "../render/haproxy";
import { osPathJoin } from "../render/common";
import { buildPem, pemDigest, tlsContainer } from "../certs/local";

export interface TlsFiles {
  /** File name under <base_cert_dir>/<lb id>/ → content. */
  files: Record<string, string>;
  /** What the renderer is told of them. */
  paths: HaproxyCertPaths;
}

/**
 * The files of `tree`'s HAProxy listeners and their pools, read through `certs` with the
 * listener's project (as Octavia's driver asks with the listener's project context). A reference
 * the manager cannot answer fails the configuration (DriverError).
 */
export async function tlsFiles(tree: Tree, certs: CertManager, baseCertDir: string): Promise<TlsFiles> {
  const lbId = tree.lb.id;
  const files: Record<string, string> = {};
  const listenerPaths: Record<string, HaproxyListenerCerts> = {};
  const poolPaths: Record<string, HaproxyPoolCerts> = {};
  const full = (name: string) => osPathJoin(baseCertDir, lbId, name);
  const read = async <T>(what: string, ref: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      // A CertificateError (the manager's), or a PEM that does not parse.
      throw new DriverError(`Could not retrieve the ${what} ${ref}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const certificate = async (project: string, ref: string, what: string): Promise<string> => {
    // _map_cert_tls_container: its id the SHA-1 of the certificate, its key decrypted.
    const container = await read(what, ref, async () => tlsContainer(await certs.getCert(project, ref)));
    const name = `${container.id}.pem`;
    files[name] = buildPem(container);
    return name;
  };
  const secret = async (project: string, ref: string, what: string): Promise<string> => {
    const pem = await read(what, ref, () => certs.getSecret(project, ref));
    const name = `${pemDigest(pem)}.pem`;
    files[name] = pem;
    return name;
  };

  const pools = new Map<string, Pool>();
  for (const l of haproxyListeners(tree) as Listener[]) {
    const project = l.project_id;
    const crtList: string[] = [];
    if (l.default_tls_container_ref) crtList.push(full(await certificate(project, l.default_tls_container_ref, "TLS certificate")));
    for (const ref of l.sni_container_refs ?? []) crtList.push(full(await certificate(project, ref, "SNI certificate")));
    if (crtList.length) files[`${l.id}.pem`] = `${crtList.join("\n")}\n`;
    const own: HaproxyListenerCerts = {};
    if (l.client_ca_tls_container_ref) own.client_ca = await secret(project, l.client_ca_tls_container_ref, "client CA");
    if (l.client_crl_container_ref) own.client_crl = await secret(project, l.client_crl_container_ref, "client CRL");
    if (own.client_ca || own.client_crl) listenerPaths[l.id] = own;
    // The listener's pools: its default pool, and the pools its L7 policies redirect to.
    const poolIds = [
      l.default_pool_id,
      ...tree
        .of<L7Policy>("l7policy")
        .filter((p) => p.listener_id === l.id)
        .map((p) => p.redirect_pool_id),
    ];
    for (const id of poolIds) {
      const pool = id ? tree.get<Pool>("pool", id) : undefined;
      if (pool && !pools.has(pool.id)) pools.set(pool.id, { ...pool, project_id: project });
    }
  }
  for (const pool of pools.values()) {
    const own: HaproxyPoolCerts = {};
    if (pool.tls_container_ref)
      own.client_cert = full(await certificate(pool.project_id, pool.tls_container_ref, "pool client certificate"));
    if (pool.ca_tls_container_ref) own.ca_cert = full(await secret(pool.project_id, pool.ca_tls_container_ref, "pool CA certificate"));
    if (pool.crl_container_ref) own.crl = full(await secret(pool.project_id, pool.crl_container_ref, "pool CRL"));
    if (Object.keys(own).length) poolPaths[pool.id] = own;
  }
  return { files, paths: { listeners: listenerPaths, pools: poolPaths } };
}

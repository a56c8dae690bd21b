// Keystone v3 token validation, as keystonemiddleware's auth_token does it for Octavia: every token
// is validated with GET /v3/auth/tokens (X-Subject-Token), authenticated by a service user's token
// that is obtained and renewed here. Validated tokens are cached for min(token expiry,
// token_cache_time) under a SHA-256 of the token, never the token itself.
import { createHash } from "node:crypto";
import type { KeystoneSettings, Logger } from "@ottava/core";

/** What a validated token says about its caller. */
export interface TokenInfo {
  userId: string;
  userName: string | undefined;
  projectId: string | undefined;
  projectName: string | undefined;
  domainId: string | undefined;
  roles: string[];
  /** "all" for a system-scoped token. */
  systemScope: string | undefined;
  expiresAt: number;
}

/** The token is missing, garbage, expired or revoked: 401. */
export class InvalidToken extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "InvalidToken";
  }
}

/** Keystone cannot be asked (down, timing out, refusing our service user): 503, never an allow. */
export class KeystoneUnavailable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "KeystoneUnavailable";
  }
}

const TIMEOUT_MS = 10_000;
/** The service token is renewed this long before it expires. */
const RENEW_MARGIN_MS = 60_000;

export interface KeystoneOptions {
  settings: KeystoneSettings;
  /** Seconds a validated token is trusted (token_cache_time). */
  cacheTime: number;
  /** Entries the cache holds at most. */
  cacheSize: number;
  log: Logger;
  now?: () => number;
}

export class KeystoneAuth {
  private readonly cache = new Map<string, { info: TokenInfo; until: number }>();
  private readonly validating = new Map<string, Promise<TokenInfo>>();
  private service: Promise<{ token: string; expiresAt: number }> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: KeystoneOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Where clients authenticate: the WWW-Authenticate header of a 401 (keystonemiddleware's www_authenticate_uri). */
  get authUri(): string {
    return this.opts.settings.url.replace(/\/v3$/, "");
  }

  async validate(token: string): Promise<TokenInfo> {
    const key = createHash("sha256").update(token).digest("hex");
    const hit = this.cache.get(key);
    const now = this.now();
    if (hit && hit.until > now) {
      // Least recently used goes first: a hit moves to the end.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.info;
    }
    this.cache.delete(key);
    // Concurrent requests with one token (a client's burst) share one validation.
    let pending = this.validating.get(key);
    if (!pending) {
      pending = this.fetchToken(token).finally(() => this.validating.delete(key));
      this.validating.set(key, pending);
    }
    const info = await pending;
    if (info.expiresAt <= this.now()) throw new InvalidToken("token expired");
    this.cache.set(key, { info, until: Math.min(info.expiresAt, now + this.opts.cacheTime * 1000) });
    while (this.cache.size > this.opts.cacheSize) this.cache.delete(this.cache.keys().next().value!);
    return info;
  }

  private async fetchToken(token: string, renewed = false): Promise<TokenInfo> {
    const service = await this.serviceToken();
    const res = await this.call("GET", "/auth/tokens", { "X-Auth-Token": service, "X-Subject-Token": token });
    if (res.status === 200) return tokenInfo(await res.json());
    if (res.status === 404) throw new InvalidToken("token not found, expired or revoked");
    if (res.status === 401 && !renewed) {
      // Our own token was refused (revoked, or Keystone's keys rotated): get a new one, once.
      this.service = undefined;
      return this.fetchToken(token, true);
    }
    if (res.status === 400 || res.status === 403) throw new InvalidToken(`keystone answered ${res.status}`);
    throw new KeystoneUnavailable(`token validation answered ${res.status}`);
  }

  /** The service user's token, shared by concurrent requests and renewed before it expires. */
  private async serviceToken(): Promise<string> {
    const seen = this.service;
    const current = seen && (await seen.catch(() => undefined));
    if (current && current.expiresAt - RENEW_MARGIN_MS > this.now()) return current.token;
    if (this.service === seen) this.service = this.authenticate(); // unless a concurrent request already renews it
    const renewing = this.service!;
    try {
      return (await renewing).token;
    } catch (e) {
      if (this.service === renewing) this.service = undefined;
      throw e;
    }
  }

  private async authenticate(): Promise<{ token: string; expiresAt: number }> {
    const s = this.opts.settings;
    const res = await this.call(
      "POST",
      "/auth/tokens",
      { "Content-Type": "application/json" },
      JSON.stringify({
        auth: {
          identity: {
            methods: ["password"],
            password: { user: { name: s.username, domain: { name: s.userDomainName }, password: s.password } },
          },
          scope: { project: { name: s.projectName, domain: { name: s.projectDomainName } } },
        },
      }),
    );
    const token = res.headers.get("x-subject-token");
    if (res.status !== 201 || !token) throw new KeystoneUnavailable(`service user authentication answered ${res.status}`);
    const body = (await res.json()) as { token?: { expires_at?: string } };
    this.opts.log.info("keystone service token obtained", { user: s.username, project: s.projectName, expiresAt: body.token?.expires_at });
    return { token, expiresAt: keystoneTime(body.token?.expires_at ?? "") || this.now() + RENEW_MARGIN_MS * 2 };
  }

  private async call(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
    try {
      return await fetch(`${this.opts.settings.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (e) {
      this.opts.log.error("keystone unreachable", { url: this.opts.settings.url, error: String((e as Error)?.cause ?? e) });
      throw new KeystoneUnavailable(`keystone unreachable: ${String(e)}`);
    }
  }
}

interface KeystoneToken {
  token: {
    expires_at: string;
    user: { id: string; name?: string; domain?: { id?: string } };
    project?: { id: string; name?: string; domain?: { id?: string } };
    roles?: { name: string }[];
    system?: Record<string, boolean>;
  };
}

function tokenInfo(body: unknown): TokenInfo {
  const t = (body as KeystoneToken)?.token;
  if (!t?.user?.id || !t.expires_at) throw new KeystoneUnavailable("keystone answered a token without a user or an expiry");
  return {
    userId: t.user.id,
    userName: t.user.name,
    projectId: t.project?.id,
    projectName: t.project?.name,
    domainId: t.project?.domain?.id ?? t.user.domain?.id,
    roles: (t.roles ?? []).map((r) => r.name),
    systemScope: t.system?.all ? "all" : undefined,
    expiresAt: keystoneTime(t.expires_at),
  };
}

/** Keystone's expires_at; some (application-credential tokens) come without a zone, and mean UTC. */
function keystoneTime(at: string): number {
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(at) ? at : `${at}Z`);
}

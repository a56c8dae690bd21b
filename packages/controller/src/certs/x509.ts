// @peculiar/x509, loaded on first use (only the tasks that issue certificates pay for it), over
// Node's WebCrypto (globalThis.crypto). The library resolves its algorithms through tsyringe, which
// wants the Reflect metadata API at load time; it only stores and reads class metadata, so a small
// WeakMap-backed stand-in is installed when no polyfill (reflect-metadata, core-js) already is.
import type * as X509 from "@peculiar/x509";

type Metadata = Map<unknown, unknown>;

function installReflectMetadata(): void {
  const R = Reflect as unknown as Record<string, unknown>;
  if (typeof R.getMetadata === "function") return;
  // target → property key (undefined: the class itself) → metadata key → value
  const store = new WeakMap<object, Map<string | symbol | undefined, Metadata>>();
  const own = (target: object, key?: string | symbol) => {
    let byKey = store.get(target);
    if (!byKey) store.set(target, (byKey = new Map()));
    let m = byKey.get(key);
    if (!m) byKey.set(key, (m = new Map()));
    return m;
  };
  const find = (target: object, key?: string | symbol) => store.get(target)?.get(key);
  R.defineMetadata = (k: unknown, v: unknown, target: object, key?: string | symbol) => void own(target, key).set(k, v);
  R.getOwnMetadata = (k: unknown, target: object, key?: string | symbol) => find(target, key)?.get(k);
  R.hasOwnMetadata = (k: unknown, target: object, key?: string | symbol) => find(target, key)?.has(k) ?? false;
  R.getMetadata = (k: unknown, target: object, key?: string | symbol) => {
    for (let o: object | null = target; o; o = Object.getPrototypeOf(o)) {
      const m = find(o, key);
      if (m?.has(k)) return m.get(k);
    }
    return undefined;
  };
  R.hasMetadata = (k: unknown, target: object, key?: string | symbol) =>
    (R.getMetadata as (...a: unknown[]) => unknown)(k, target, key) !== undefined;
  R.metadata = (k: unknown, v: unknown) => (target: object, key?: string | symbol) => void own(target, key).set(k, v);
}

let loading: Promise<typeof X509> | undefined;

export function x509(): Promise<typeof X509> {
  return (loading ??= (async () => {
    installReflectMetadata();
    const lib = await import("@peculiar/x509");
    lib.cryptoProvider.set(globalThis.crypto as never);
    return lib;
  })());
}

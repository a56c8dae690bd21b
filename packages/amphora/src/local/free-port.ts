import { createServer } from "node:net";

/** A TCP port free on `host` now: bound to port 0 and released (another process may take it before the caller binds it). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const addr = server.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      server.close(() => (port ? resolvePort(port) : reject(new Error("could not pick a free port"))));
    });
  });
}

// Test scaffolding: a small PKI made with openssl, for the tests of certificates and of what names them.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * In `at`: a CA (RSA) with its CRL, a server certificate it signs (EC key, also kept encrypted), and another CA (EC) with its CRL:
 * ca/{ca.pem,ca.key,ca.crl}, other/{ca.pem,ca.key,ca.crl}, server.pem, server.key, server.enc.key (pass phrase "s3cret").
 */
export function makePki(at: string) {
  const openssl = (cwd: string, ...args: string[]) => execFileSync("openssl", args, { cwd, stdio: "pipe" });
  const ca = (sub: string, keyArgs: string[], cn: string) => {
    const d = join(at, sub);
    mkdirSync(d);
    openssl(d, "req", "-x509", "-newkey", ...keyArgs, "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", `/CN=${cn}`, "-days", "2");
    writeFileSync(join(d, "index.txt"), "");
    writeFileSync(join(d, "crlnumber"), "01\n");
    writeFileSync(
      join(d, "ca.cnf"),
      "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 2\n",
    );
    openssl(d, "ca", "-gencrl", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-out", "ca.crl");
  };
  ca("ca", ["rsa:2048"], "Test CA");
  ca("other", ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"], "Other CA");
  openssl(
    at,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=www.example.com",
  );
  openssl(
    at,
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca/ca.pem",
    "-CAkey",
    "ca/ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
  );
  openssl(at, "pkey", "-in", "server.key", "-aes256", "-passout", "pass:s3cret", "-out", "server.enc.key");
}

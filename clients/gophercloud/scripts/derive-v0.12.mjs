// Derives the gophercloud 0.12 copy of Ottava's gophercloud package (clients/gophercloud/ottava, written
// for gophercloud v2) into a GOPATH: node derive-v0.12.mjs <gopath> writes
// <gopath>/src/ottava/clients/gophercloud/ottava. Debian ships gophercloud 0.12 and Go 1.19, which v2
// needs too new a Go for; this copy is what CI builds and tests (test/clients.e2e.test.ts).
//
// What differs, and so what this rewrites: v2's module path ends in /v2; every call takes a
// context.Context first; v2's testhelper hands each test a FakeServer where 0.12's has one global
// server (th.SetupHTTP/TeardownHTTP, th.Mux); and 0.12 answers an unexpected status with an
// ErrDefault<code> type, which compat.go's 0.12 version (below) reads. Any v2 idiom left after the
// rewrite fails the derivation, so a new one is never copied half-translated.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("../ottava", import.meta.url));
const IMPORT_PATH = "ottava/clients/gophercloud/ottava";

/** compat.go for gophercloud 0.12: the status errors are ErrDefault400 … ErrDefault503, each embedding ErrUnexpectedResponseCode. */
const COMPAT_012 = `package ottava

// Derived for gophercloud 0.12 by scripts/derive-v0.12.mjs from compat.go.

import "github.com/gophercloud/gophercloud"

// responseError finds the unexpected-status error in err: gophercloud 0.12
// returns an ErrDefault<status> for the statuses it names, else an
// ErrUnexpectedResponseCode.
func responseError(err error) (status int, body []byte, ok bool) {
	var e gophercloud.ErrUnexpectedResponseCode
	switch t := err.(type) {
	case gophercloud.ErrUnexpectedResponseCode:
		e = t
	case gophercloud.ErrDefault400:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault401:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault403:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault404:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault405:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault408:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault409:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault429:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault500:
		e = t.ErrUnexpectedResponseCode
	case gophercloud.ErrDefault503:
		e = t.ErrUnexpectedResponseCode
	default:
		return 0, nil, false
	}
	return e.Actual, e.Body, true
}
`;

/** [pattern, replacement] in order; each applied to every file. */
const REWRITES = [
  // Imports: the v2 module and its packages are gophercloud's 0.12 paths; no context package.
  [/"github\.com\/gophercloud\/gophercloud\/v2(\/|")/g, '"github.com/gophercloud/gophercloud$1'],
  [/^\s*"context"\n/gm, ""],
  [/import \(\n\n/g, "import (\n"],
  // The context parameter and argument.
  [/ctx context\.Context, /g, ""],
  [/\(ctx, /g, "("],
  [/context\.TODO\(\), /g, ""],
  // v2's per-test FakeServer is 0.12's global test server.
  [/fakeServer := th\.SetupHTTP\(\)/g, "th.SetupHTTP()"],
  [/defer fakeServer\.Teardown\(\)/g, "defer th.TeardownHTTP()"],
  [/fakeServer\.Mux\b/g, "th.Mux"],
  [/client\.ServiceClient\(fakeServer\)/g, "client.ServiceClient()"],
  [/, fakeServer th\.FakeServer\b/g, ""],
  [/\(t, fakeServer\)/g, "(t)"],
  [/\(t, fakeServer, /g, "(t, "],
];

/** What must not survive the rewrite. */
const LEFTOVERS = [/gophercloud\/v2/, /\bcontext\./, /\bctx\b/, /fakeServer/, /FakeServer/];

function goFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? goFiles(join(dir, e.name)) : e.name.endsWith(".go") ? [join(dir, e.name)] : [],
  );
}

export function derive(gopath) {
  const target = join(gopath, "src", IMPORT_PATH);
  rmSync(target, { recursive: true, force: true });
  for (const file of goFiles(SOURCE)) {
    const rel = relative(SOURCE, file);
    let text = rel === "compat.go" ? COMPAT_012 : readFileSync(file, "utf8");
    for (const [pattern, replacement] of REWRITES) text = text.replace(pattern, replacement);
    const left = LEFTOVERS.find((p) => p.test(text));
    if (left) throw new Error(`${rel}: ${left} is left after deriving the 0.12 copy; teach scripts/derive-v0.12.mjs its 0.12 form`);
    mkdirSync(dirname(join(target, rel)), { recursive: true });
    writeFileSync(join(target, rel), text);
  }
  return target;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const gopath = process.argv[2];
  if (!gopath) {
    console.error("usage: node derive-v0.12.mjs <gopath>");
    process.exit(2);
  }
  console.log(derive(gopath));
}

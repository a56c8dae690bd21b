// Octavia's own code (python3-octavia) in a Python process, asked one JSON line at a time, and polling until a check holds.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/**
 * `/usr/bin/python3 -c script ...args`, answering each JSON line written to it with one JSON line.
 * When it ends, the questions still waiting are answered {error: <what it wrote on stderr>}.
 */
export class PythonJsonProcess {
  private readonly proc: ChildProcessWithoutNullStreams;
  private buffer = "";
  private stderr = "";
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(script: string, args: string[] = []) {
    this.proc = spawn("/usr/bin/python3", ["-c", script, ...args], { stdio: ["pipe", "pipe", "pipe"] });
    this.proc.stderr.on("data", (d) => (this.stderr += d));
    this.proc.stdout.on("data", (d) => {
      this.buffer += d;
      for (let i; (i = this.buffer.indexOf("\n")) >= 0;) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        this.waiting.shift()?.(line);
      }
    });
    this.proc.on("exit", () => {
      for (const w of this.waiting.splice(0)) w(JSON.stringify({ error: this.stderr }));
    });
  }

  /** Its answer to `question`, parsed. */
  async ask(question: unknown): Promise<any> {
    const line = new Promise<string>((ok) => this.waiting.push(ok));
    this.proc.stdin.write(JSON.stringify(question) + "\n");
    return JSON.parse(await line);
  }

  close() {
    this.proc.stdin.end();
  }
}

/** Polls `read` until `check` holds; after `ms`, throws the last failure (of the read or the check). */
export async function eventually<T>(read: () => Promise<T>, check: (v: T) => void, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const v = await read();
      check(v);
      return v;
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

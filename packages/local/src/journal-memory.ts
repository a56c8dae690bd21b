// The ExecutionJournal port kept in memory: for runners that need not outlive their process (tests
// that build their own engine). `npm start` journals in the table (packages/db, journal.ts).
import type { ExecutionJournal, JournaledExecution, JournaledTask } from "@ottava/core";

interface Entry {
  execution: JournaledExecution;
  /** ms since the epoch; absent while the execution runs. */
  expires?: number;
  tasks: Map<string, JournaledTask>;
}

export class MemoryExecutionJournal implements ExecutionJournal {
  private readonly entries = new Map<string, Entry>();

  private entry(flow: string, name: string): Entry | undefined {
    const e = this.entries.get(`${flow}#${name}`);
    if (e?.expires !== undefined && e.expires <= Date.now()) {
      this.entries.delete(`${flow}#${name}`);
      return undefined;
    }
    return e;
  }

  async begin(execution: JournaledExecution): Promise<JournaledExecution | undefined> {
    const existing = this.entry(execution.flow, execution.name);
    if (existing) return { ...existing.execution };
    this.entries.set(`${execution.flow}#${execution.name}`, { execution: { ...execution }, tasks: new Map() });
    return undefined;
  }

  async get(flow: string, name: string): Promise<JournaledExecution | undefined> {
    const e = this.entry(flow, name);
    return e && { ...e.execution };
  }

  async running(): Promise<JournaledExecution[]> {
    return [...this.entries.values()].filter((e) => e.execution.status === "RUNNING").map((e) => ({ ...e.execution }));
  }

  async tasks(flow: string, name: string): Promise<Map<string, JournaledTask>> {
    return new Map(this.entry(flow, name)?.tasks ?? []);
  }

  async recordTask(flow: string, name: string, key: string, outcome: JournaledTask): Promise<void> {
    const e = this.entry(flow, name);
    if (e && !e.tasks.has(key)) e.tasks.set(key, outcome);
  }

  async end(
    flow: string,
    name: string,
    end: Pick<JournaledExecution, "status" | "stopDate" | "output" | "error" | "cause">,
    retainSeconds: number,
    _taskKeys: string[],
  ): Promise<void> {
    const e = this.entry(flow, name);
    if (!e) return;
    Object.assign(e.execution, end);
    e.expires = Date.now() + retainSeconds * 1000;
    e.tasks.clear();
  }
}

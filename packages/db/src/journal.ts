// The DynamoDB adapter of the ExecutionJournal port: what the local workflow runner (packages/local,
// runner.ts) keeps of its executions so that a restarted `npm start` continues them. On AWS Step
// Functions keeps its own history and this journal is not used.
//
// Items (in no index):
// - execution: pk `EXEC#<flow>#<name>`, sk `EXEC`: `flow`, `name`, `input` (JSON text), `status`,
//   `start_date`, and once ended `stop_date`, `output` / `error` / `cause` and `expires_at`;
// - running mark: pk `EXECS`, sk `RUNNING#<flow>#<name>`: one per RUNNING execution, written in the
//   transaction that records the start and deleted in the one that records the end (a restarted
//   runner Queries this partition, never the table);
// - task record: pk `EXEC#<flow>#<name>`, sk `TASK#<state>#<input hash>#<occurrence>`: `output`
//   (JSON text) or `error_name` / `error_message` of one completed task invocation. Deleted in the
//   transaction that records the end; `expires_at` as a backstop.
import { BatchWriteCommand, GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Config, ExecutionJournal, JournaledExecution, JournaledTask } from "@ottava/core";
import { DynamoAdapter, MAX_TRANSACTION, conditionally, createClients, retryConflicts } from "./client";
import { queryAll } from "./query";

const execPk = (flow: string, name: string) => `EXEC#${flow}#${name}`;
const EXEC_SK = "EXEC";
const RUNNING_PK = "EXECS";
const runningSk = (flow: string, name: string) => `RUNNING#${flow}#${name}`;
const TASK_PREFIX = "TASK#";
/** Task records outlive any execution: a backstop in case the end's clean-up did not run. */
const TASK_RECORD_SECONDS = 30 * 24 * 3600;

type Item = Record<string, unknown>;

const nowSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

function toExecution(item: Item): JournaledExecution {
  const out: JournaledExecution = {
    flow: String(item.flow),
    name: String(item.name),
    input: String(item.input),
    status: item.status as JournaledExecution["status"],
    startDate: String(item.start_date),
  };
  if (item.stop_date !== undefined) out.stopDate = String(item.stop_date);
  if (item.output !== undefined) out.output = String(item.output);
  if (item.error !== undefined) out.error = String(item.error);
  if (item.cause !== undefined) out.cause = String(item.cause);
  return out;
}

export class DynamoExecutionJournal extends DynamoAdapter implements ExecutionJournal {
  constructor(doc: DynamoDBDocumentClient, table: string, now?: () => Date) {
    super(doc, { tableName: table, now });
  }

  /** DynamoDB's TTL deletes late: an expired item reads as absent. */
  private live(item: Item | undefined): Item | undefined {
    if (!item) return undefined;
    const expires = item.expires_at;
    return typeof expires === "number" && expires <= nowSeconds(this.now()) ? undefined : item;
  }

  async begin(e: JournaledExecution): Promise<JournaledExecution | undefined> {
    const item: Item = {
      pk: execPk(e.flow, e.name),
      sk: EXEC_SK,
      kind: "execution",
      flow: e.flow,
      name: e.name,
      input: e.input,
      status: e.status,
      start_date: e.startDate,
    };
    try {
      await retryConflicts(() =>
        this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.table,
                  Item: item,
                  // A name is free if never used, or used by an execution that has expired.
                  ConditionExpression: "attribute_not_exists(pk) OR expires_at <= :now",
                  ExpressionAttributeValues: { ":now": nowSeconds(this.now()) },
                },
              },
              {
                Put: {
                  TableName: this.table,
                  Item: { pk: RUNNING_PK, sk: runningSk(e.flow, e.name), kind: "execution-running", flow: e.flow, name: e.name },
                },
              },
            ],
          }),
        ),
      );
      return undefined;
    } catch (err) {
      const reasons = (err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if ((err as Error).name !== "TransactionCanceledException" || reasons[0]?.Code !== "ConditionalCheckFailed") throw err;
      const existing = await this.get(e.flow, e.name);
      if (!existing) throw err; // expired between the write and the read: the caller tries again
      return existing;
    }
  }

  async get(flow: string, name: string): Promise<JournaledExecution | undefined> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: execPk(flow, name), sk: EXEC_SK }, ConsistentRead: true }),
    );
    const item = this.live(res.Item);
    return item && toExecution(item);
  }

  async running(): Promise<JournaledExecution[]> {
    const out: JournaledExecution[] = [];
    for (const mark of await this.query(RUNNING_PK, "RUNNING#")) {
      const e = await this.get(String(mark.flow), String(mark.name));
      if (e?.status === "RUNNING") out.push(e);
    }
    return out.sort((a, b) => a.startDate.localeCompare(b.startDate));
  }

  async tasks(flow: string, name: string): Promise<Map<string, JournaledTask>> {
    const out = new Map<string, JournaledTask>();
    for (const item of await this.query(execPk(flow, name), TASK_PREFIX)) {
      const key = String(item.sk).slice(TASK_PREFIX.length);
      if (typeof item.output === "string") out.set(key, { output: item.output });
      else out.set(key, { error: { name: String(item.error_name), message: String(item.error_message ?? "") } });
    }
    return out;
  }

  async recordTask(flow: string, name: string, key: string, outcome: JournaledTask): Promise<void> {
    const body =
      "output" in outcome ? { output: outcome.output } : { error_name: outcome.error.name, error_message: outcome.error.message };
    await conditionally(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: execPk(flow, name),
            sk: `${TASK_PREFIX}${key}`,
            kind: "execution-task",
            ...body,
            expires_at: nowSeconds(this.now()) + TASK_RECORD_SECONDS,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      ),
    );
  }

  async end(
    flow: string,
    name: string,
    end: Pick<JournaledExecution, "status" | "stopDate" | "output" | "error" | "cause">,
    retainSeconds: number,
    taskKeys: string[],
  ): Promise<void> {
    const set: Record<string, unknown> = {
      status: end.status,
      stop_date: end.stopDate,
      expires_at: nowSeconds(this.now()) + retainSeconds,
    };
    if (end.output !== undefined) set.output = end.output;
    if (end.error !== undefined) set.error = end.error;
    if (end.cause !== undefined) set.cause = end.cause;
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const parts = Object.entries(set).map(([k, v], i) => {
      names[`#a${i}`] = k;
      values[`:v${i}`] = v;
      return `#a${i} = :v${i}`;
    });
    // The task records served only to continue the execution: they go with the end, in its
    // transaction as far as it holds them (their expires_at is the backstop).
    const records = [...new Set(taskKeys)].map((key) => ({ pk: execPk(flow, name), sk: `${TASK_PREFIX}${key}` }));
    const inline = records.splice(0, MAX_TRANSACTION - 2);
    await retryConflicts(() =>
      this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: { pk: execPk(flow, name), sk: EXEC_SK },
                UpdateExpression: `SET ${parts.join(", ")}`,
                ConditionExpression: "attribute_exists(pk)",
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
              },
            },
            { Delete: { TableName: this.table, Key: { pk: RUNNING_PK, sk: runningSk(flow, name) } } },
            ...inline.map((Key) => ({ Delete: { TableName: this.table, Key } })),
          ],
        }),
      ),
    );
    for (let i = 0; i < records.length; i += 25) {
      let requests = records.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests.length > 0 && attempt < 5; attempt++) {
        const res = await this.doc.send(new BatchWriteCommand({ RequestItems: { [this.table]: requests } }));
        requests = (res.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  private query(pk: string, prefix: string): Promise<Item[]> {
    return queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": pk, ":prefix": prefix },
      ConsistentRead: true,
    });
  }
}

/**
 * The journal on the configured table, through a client of its own that nothing decorates: it is the
 * local stand-in for Step Functions' own history, not a request Ottava makes on AWS, so the API
 * benchmark's meter (its counts and costs) leaves it out.
 */
export function createExecutionJournal(config: Pick<Config, "dynamodbEndpoint" | "tableName">): DynamoExecutionJournal {
  return new DynamoExecutionJournal(createClients(config.dynamodbEndpoint).doc, config.tableName);
}

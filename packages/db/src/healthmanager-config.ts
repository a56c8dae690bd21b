// The DynamoDB adapter of the HealthManagerConfigStore port (the amphora agent configuration
// refresh): the health-manager configuration item, and each amphora's agent generation on its item.
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { DELETED, type HealthManagerConfig, type HealthManagerConfigStore, type HealthManagerRefresh } from "@ottava/core";
import { DynamoAdapter, conditionalUpdate, conditionally } from "./client";
import { AMPHORA, childSk, treePk } from "./items";
import { getItem } from "./owner";

/** The health-manager configuration item. */
const HM_PK = "CONFIG#healthmanager";
const HM_SK = "CONFIG";

export class DynamoHealthManagerConfig extends DynamoAdapter implements HealthManagerConfigStore {
  async getHealthManagerConfig(): Promise<HealthManagerConfig | undefined> {
    const item = await getItem(this.doc, this.table, HM_PK, HM_SK);
    if (!item) return undefined;
    return {
      controller_ip_port_list: (item.controller_ip_port_list as string[] | undefined) ?? [],
      generation: Number(item.generation ?? 0),
      refresh: { total: Number(item.refresh_total ?? 0), done: Number(item.refresh_done ?? 0), failed: Number(item.refresh_failed ?? 0) },
    };
  }

  async putHealthManagerConfig(list: string[], expect: number): Promise<boolean> {
    return conditionally(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: HM_PK,
            sk: HM_SK,
            kind: "healthmanager",
            controller_ip_port_list: list,
            generation: expect + 1,
            refresh_total: 0,
            refresh_done: 0,
            refresh_failed: 0,
            updated_at: this.now().toISOString(),
          },
          ConditionExpression: expect === 0 ? "attribute_not_exists(pk) OR #g = :g" : "#g = :g",
          ExpressionAttributeNames: { "#g": "generation" },
          ExpressionAttributeValues: { ":g": expect },
        }),
      ),
    );
  }

  async addHealthManagerRefresh(generation: number, add: Partial<HealthManagerRefresh>, page?: string): Promise<boolean> {
    const parts = (["total", "done", "failed"] as const).filter((k) => add[k]);
    if (parts.length === 0) return true;
    const names: Record<string, string> = { "#g": "generation" };
    const values: Record<string, unknown> = { ":g": generation };
    const adds = parts.map((k) => {
      names[`#${k}`] = `refresh_${k}`;
      values[`:${k}`] = add[k];
      return `#${k} :${k}`;
    });
    let condition = "#g = :g";
    if (page !== undefined) {
      // The pages counted in this generation (a new generation's put starts without them): a page
      // counted again (its task retried, or run again by a restarted runner) adds nothing.
      names["#pages"] = "refresh_pages";
      values[":page"] = page;
      values[":pages"] = new Set([page]);
      adds.push("#pages :pages");
      condition += " AND NOT contains(#pages, :page)";
    }
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: HM_PK, sk: HM_SK },
          UpdateExpression: `ADD ${adds.join(", ")}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (e) {
      if (!(e instanceof ConditionalCheckFailedException)) throw e;
      if (page === undefined) return false;
      const item = await getItem(this.doc, this.table, HM_PK, HM_SK);
      return Number(item?.generation ?? 0) === generation; // the same generation: that page was counted already
    }
  }

  async recordAmphoraAgentGeneration(lbId: string, id: string, generation: number, at: string): Promise<boolean> {
    return conditionalUpdate(this.doc, {
      TableName: this.table,
      Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
      UpdateExpression: "SET #ag = :g, #at = :at",
      ConditionExpression: "attribute_exists(pk) AND #st <> :deleted AND (attribute_not_exists(#ag) OR #ag < :g)",
      ExpressionAttributeNames: { "#ag": "agent_generation", "#at": "agent_config_at", "#st": "status" },
      ExpressionAttributeValues: { ":g": generation, ":at": at, ":deleted": DELETED },
    });
  }
}

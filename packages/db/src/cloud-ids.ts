// The CloudIdStore port: which cloud resource a UUID of Octavia's API names (the vpc network driver's
// subnets, VPCs, ENIs and security groups). One item per UUID: pk CLOUDID#<uuid>, sk CLOUDID,
// `cloud_id`; written once (a put of the same pair again is harmless: the UUID is derived from the
// cloud id), never deleted (a UUID always names the same resource, which may be gone), in no index.
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { CloudIdStore } from "@ottava/core";

export const cloudIdKey = (uuid: string) => ({ pk: `CLOUDID#${uuid}`, sk: "CLOUDID" });

export class DynamoCloudIdStore implements CloudIdStore {
  /** What this process already read or wrote: a UUID names the same cloud id for ever. */
  private readonly known = new Map<string, string>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async remember(uuid: string, cloudId: string): Promise<void> {
    if (this.known.get(uuid) === cloudId) return;
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...cloudIdKey(uuid), cloud_id: cloudId } }));
    this.known.set(uuid, cloudId);
  }

  async cloudId(uuid: string): Promise<string | undefined> {
    const hit = this.known.get(uuid);
    if (hit) return hit;
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: cloudIdKey(uuid) }));
    const found = out.Item?.cloud_id as string | undefined;
    if (found) this.known.set(uuid, found);
    return found;
  }
}

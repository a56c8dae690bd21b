// The local network driver's address allocations (what Neutron's IP allocation table is to Octavia's allowed_address_pairs driver): one item per loopback address handed out, claimed with a conditional write.
//
// Items: pk LOCALVIP, sk ADDR#<address>; `owner` (the load balancer's id for its VIP and additional
// VIPs, the amphora's id for its VRRP address), `port_id`, `allocated_at`. One partition: the local
// data plane hands out at most a range of addresses, all read by one Query to find a free one.
import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { conditionally } from "./client";
import { queryAll } from "./query";

export const LOCAL_VIP_PK = "LOCALVIP";
export const localVipSk = (address: string) => `ADDR#${address}`;

/** An address the local network driver handed out. */
export interface LocalAddressAllocation {
  address: string;
  /** The load balancer (VIP, additional VIPs) or amphora (VRRP address) it belongs to. */
  owner: string;
  port_id: string;
  allocated_at: string;
}

export class DynamoVipStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Every address handed out (one consistent Query of the partition, paged). */
  async allocated(): Promise<LocalAddressAllocation[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": LOCAL_VIP_PK },
      ConsistentRead: true,
    });
    return items.map((item) => ({
      address: item.address as string,
      owner: item.owner as string,
      port_id: item.port_id as string,
      allocated_at: item.allocated_at as string,
    }));
  }

  /**
   * Claims `address` for `owner`: true if it is now the owner's (free before, or already its own: a
   * retried allocation), false if someone else holds it. One conditional put, so two load balancers
   * can never both win an address.
   */
  async claim(address: string, owner: string, portId: string): Promise<boolean> {
    return conditionally(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: LOCAL_VIP_PK, sk: localVipSk(address), address, owner, port_id: portId, allocated_at: new Date().toISOString() },
          ConditionExpression: "attribute_not_exists(pk) OR #owner = :owner",
          ExpressionAttributeNames: { "#owner": "owner" },
          ExpressionAttributeValues: { ":owner": owner },
        }),
      ),
    );
  }

  /** Gives `address` back, only if `owner` holds it (a second release, or someone else's address, changes nothing). */
  async release(address: string, owner: string): Promise<void> {
    await conditionally(() =>
      this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: LOCAL_VIP_PK, sk: localVipSk(address) },
          ConditionExpression: "#owner = :owner",
          ExpressionAttributeNames: { "#owner": "owner" },
          ExpressionAttributeValues: { ":owner": owner },
        }),
      ),
    );
  }
}

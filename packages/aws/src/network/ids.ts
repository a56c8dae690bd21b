// AWS ids as Octavia's API knows them: a UUID each (the API validates subnet, network, port and group ids
// as UUIDs), derived from the Region and the id, and remembered (CloudIdStore) to be read back.
import { uuidOf, type CloudIdStore } from "@ottava/core";

/** The UUID of an AWS resource id ("subnet-…", "vpc-…", "eni-…", "sg-…") in a Region: stable for ever. */
export const awsUuid = (region: string, awsId: string): string => uuidOf(`aws/${region}/${awsId}`);

/** The Region the API's EC2 calls go to (as edge's signed client picks it), whose ids it shows. */
export const apiRegion = (): string => process.env.AWS_REGION ?? "us-east-1";

/** The AWS ids of one Region and their UUIDs, remembered in `store`. */
export class AwsIds {
  constructor(
    readonly region: string,
    private readonly store: CloudIdStore,
  ) {}

  /** The UUID the API shows for `awsId`, remembered so that awsId() finds it again. */
  async uuid(awsId: string): Promise<string> {
    const uuid = awsUuid(this.region, awsId);
    await this.store.remember(uuid, awsId);
    return uuid;
  }

  /**
   * The AWS id a UUID names, if it names one of `prefix` ("subnet", "vpc", "eni", "sg"); undefined if
   * it names nothing Ottava answered (or another kind).
   */
  async awsId(uuid: string, prefix: string): Promise<string | undefined> {
    const id = await this.store.cloudId(uuid.toLowerCase());
    return id?.startsWith(`${prefix}-`) ? id : undefined;
  }
}

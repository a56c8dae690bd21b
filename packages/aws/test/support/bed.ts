// What the tests of EC2 profiles and flows build in their moto: the account of ./fixture.ts (a VPC of
// the file's own /20 of 198.18.0.0/15, or of a part of it, a management subnet in each of two zones, a
// security group, tagged amphora AMIs), with its own client to the emulator.
import { DescribeInstancesCommand, EC2Client, type Instance } from "@aws-sdk/client-ec2";
import { ec2Fixture } from "./fixture";
import { MOTO_CLIENT, type Moto } from "./moto";

export interface Ec2Bed {
  /** An SDK client to the emulator. */
  ec2: EC2Client;
  /** The management subnets by zone: us-east-1a and us-east-1b. */
  subnets: Record<"us-east-1a" | "us-east-1b", string>;
  securityGroup: string;
  /** A self-owned available AMI tagged AMP_IMAGE_TAG_KEY = `tag`; answers its id. */
  taggedImage(tag: string): Promise<string>;
  /** Every instance the emulator holds that is not terminated. */
  instances(): Promise<Instance[]>;
}

/**
 * Builds the bed in `moto`, its VPC the /`prefix` (default a /20; at most a /23, for the two management
 * subnets) starting at `cidr` (e.g. "198.18.32.0").
 */
export async function ec2Bed(moto: Moto, cidr: string, prefix = 20): Promise<Ec2Bed> {
  if (prefix > 23) throw new Error(`ec2Bed: a /${prefix} cannot hold the two management /24s`);
  const ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  const fx = await ec2Fixture(ec2, `${cidr}/${prefix}`);
  return {
    ec2,
    subnets: fx.subnets as Ec2Bed["subnets"],
    securityGroup: fx.securityGroup,
    taggedImage: (tag) => fx.taggedImage(tag, `amphora-${tag}-${Date.now()}`),
    async instances() {
      const out = await ec2.send(
        new DescribeInstancesCommand({ Filters: [{ Name: "instance-state-name", Values: ["pending", "running"] }] }),
      );
      return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
    },
  };
}

// What the tests of EC2 profiles and flows build in their moto: a VPC of the file's own /20 of
// 198.18.0.0/15, a management subnet in each of two zones, a security group, and self-owned AMIs
// tagged as amphora images (made with CreateImage from an instance of a public AMI: RegisterImage
// would drop the tags).
import {
  CreateImageCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  EC2Client,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type Instance,
} from "@aws-sdk/client-ec2";
import { AMP_IMAGE_TAG_KEY } from "../../src/constants";
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

/** Builds the bed in `moto`, in the /20 starting at `cidr` (e.g. "198.18.32.0"). */
export async function ec2Bed(moto: Moto, cidr: string): Promise<Ec2Bed> {
  const ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  const [a, b, c] = cidr.split(".");
  const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: `${cidr}/20` }))).Vpc!.VpcId!;
  const subnet = async (zone: string, third: number) =>
    (await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `${a}.${b}.${third}.0/24`, AvailabilityZone: zone }))).Subnet!
      .SubnetId!;
  const subnets = { "us-east-1a": await subnet("us-east-1a", Number(c)), "us-east-1b": await subnet("us-east-1b", Number(c) + 1) };
  const securityGroup = (
    await ec2.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: "lb-mgmt-sec-grp", Description: "amphorae" }))
  ).GroupId!;
  const publicAmi = (
    await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"], Filters: [{ Name: "architecture", Values: ["x86_64"] }] }))
  ).Images![0]!.ImageId!;
  return {
    ec2,
    subnets,
    securityGroup,
    async taggedImage(tag) {
      const run = await ec2.send(new RunInstancesCommand({ ImageId: publicAmi, InstanceType: "t3.micro", MinCount: 1, MaxCount: 1 }));
      const instanceId = run.Instances![0]!.InstanceId!;
      const out = await ec2.send(
        new CreateImageCommand({
          InstanceId: instanceId,
          Name: `amphora-${tag}-${Date.now()}`,
          TagSpecifications: [{ ResourceType: "image", Tags: [{ Key: AMP_IMAGE_TAG_KEY, Value: tag }] }],
        }),
      );
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      return out.ImageId!;
    },
    async instances() {
      const out = await ec2.send(
        new DescribeInstancesCommand({ Filters: [{ Name: "instance-state-name", Values: ["pending", "running"] }] }),
      );
      return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
    },
  };
}

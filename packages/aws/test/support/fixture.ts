// What an account holds before Ottava boots amphorae in it, made in moto for a test file or a bench:
// a VPC of the file's range with a management subnet in two zones, a security group, and amphora AMIs
// tagged as an operator tags them (CreateImage: moto's RegisterImage drops tags).
import {
  CreateImageCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type EC2Client,
} from "@aws-sdk/client-ec2";
import { AMP_IMAGE_TAG_KEY } from "../../src/constants";

export interface Ec2Fixture {
  /** Management subnets by zone: us-east-1a and us-east-1b. */
  subnets: Record<string, string>;
  securityGroup: string;
  /** One of Amazon's public AMIs (what the tagged ones are made from). */
  publicAmi: string;
  /** A new self-owned AMI tagged AMP_IMAGE_TAG_KEY = `tag` (a second later than the last: moto's CreationDate has whole seconds). */
  taggedImage(tag: string, name: string): Promise<string>;
}

/** Makes the fixture in the VPC `cidr` (a /20 of 198.18.0.0/15, or a part of one: its first two /24s are the subnets). */
export async function ec2Fixture(ec2: EC2Client, cidr = "198.18.0.0/20"): Promise<Ec2Fixture> {
  const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: cidr }))).Vpc!.VpcId!;
  const [a, b, c] = cidr.split("/")[0]!.split(".").map(Number) as [number, number, number];
  const subnets: Record<string, string> = {};
  for (const [i, zone] of ["us-east-1a", "us-east-1b"].entries())
    subnets[zone] = (
      await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `${a}.${b}.${c + i}.0/24`, AvailabilityZone: zone }))
    ).Subnet!.SubnetId!;
  const securityGroup = (
    await ec2.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: "lb-mgmt-sec-grp", Description: "amphorae" }))
  ).GroupId!;
  const publicAmi = (
    await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"], Filters: [{ Name: "architecture", Values: ["x86_64"] }] }))
  ).Images![0]!.ImageId!;
  let last = 0;
  const taggedImage = async (tag: string, name: string) => {
    await new Promise((r) => setTimeout(r, Math.max(0, last + 1100 - Date.now())));
    const run = await ec2.send(new RunInstancesCommand({ ImageId: publicAmi, InstanceType: "t3.micro", MinCount: 1, MaxCount: 1 }));
    const instance = run.Instances![0]!.InstanceId!;
    const out = await ec2.send(
      new CreateImageCommand({
        InstanceId: instance,
        Name: name,
        TagSpecifications: [{ ResourceType: "image", Tags: [{ Key: AMP_IMAGE_TAG_KEY, Value: tag }] }],
      }),
    );
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instance] }));
    last = Date.now();
    return out.ImageId!;
  };
  return { subnets, securityGroup, publicAmi, taggedImage };
}

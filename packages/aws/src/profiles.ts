// The profile checks with OTTAVA_COMPUTE_DRIVER=ec2: Octavia's amphora provider driver's
// validate_flavor and validate_availability_zone (api/drivers/amphora_driver/v2/driver.py), with
// EC2 answering what Nova, Glance and Neutron answer there. The API makes these calls, so they go
// through the minimal signed Query client (@ottava/edge/aws-query), not the SDK's EC2 client (about
// 1 MB that does not tree-shake; docs/benchmarks.md).
import { ProfileRefused, type CloudIdStore, type Config, type ProfileValidator } from "@ottava/core";
import { awsQueryClient, xmlItems, xmlText, type AwsQueryCall } from "@ottava/edge/aws-query";
import { AMP_IMAGE_TAG_KEY } from "./constants";
import { AwsIds, apiRegion } from "./network/ids";

/** EC2's Query API version. */
export const EC2_API_VERSION = "2016-11-15";

/** The API's EC2 client: the Query protocol at OTTAVA_EC2_ENDPOINT, else the Region's endpoint. */
export const ec2QueryClient = (config: Pick<Config, "ec2Endpoint">): AwsQueryCall =>
  awsQueryClient({ signingName: "ec2", version: EC2_API_VERSION }, { endpoint: config.ec2Endpoint });

const stringOf = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const errorName = (e: unknown) => (e as { name?: unknown } | null)?.name;

/**
 * Each value is looked up as the EC2 compute driver will use it: the instance type (Nova's flavor),
 * the newest self-owned available AMI tagged AMP_IMAGE_TAG_KEY = amp_image_tag (Glance's image tag),
 * the Region's zone (Nova's availability zone), the management subnet (a Neutron network in Octavia).
 * The refusals are Octavia's texts, naming the AWS resource. With the vpc network driver (`ids` given),
 * each of valid_vip_networks must be the UUID of a VPC (a Neutron network's id in Octavia).
 */
export class Ec2ProfileValidator implements ProfileValidator {
  constructor(
    private readonly ec2: AwsQueryCall,
    private readonly ids?: AwsIds,
  ) {}

  /** compute_flavor, then amp_image_tag, as Octavia's validate_flavor. */
  async validateFlavor(data: Record<string, unknown>): Promise<void> {
    const type = stringOf(data.compute_flavor);
    if (type) await this.instanceType(type);
    const tag = stringOf(data.amp_image_tag);
    if (tag) await this.image(tag);
  }

  /** compute_zone, then valid_vip_networks, then management_network, as Octavia's validate_availability_zone. */
  async validateAvailabilityZone(data: Record<string, unknown>): Promise<void> {
    const zone = stringOf(data.compute_zone);
    if (zone) await this.zone(zone);
    const networks = Array.isArray(data.valid_vip_networks) ? data.valid_vip_networks : [];
    if (this.ids) for (const network of networks) await this.vpc(String(network));
    const subnet = stringOf(data.management_network);
    if (subnet) await this.subnet(subnet);
  }

  /** Nova's validate_flavor: InvalidSubresource(resource='Nova flavor'). */
  private async instanceType(type: string): Promise<void> {
    try {
      const out = await this.ec2("DescribeInstanceTypes", { "InstanceType.1": type }, `EC2 DescribeInstanceTypes of ${type}`);
      if (xmlItems(out, "instanceTypeSet").some((i) => xmlText(i, "instanceType") === type)) return;
    } catch (e) {
      if (errorName(e) !== "InvalidInstanceType" && errorName(e) !== "InvalidParameterValue") throw e;
    }
    throw new ProfileRefused(`EC2 instance type ${type} not found.`);
  }

  /** The amphora driver's check of amp_image_tag: Glance's get_image_id_by_tag failing with ImageGetException. */
  private async image(tag: string): Promise<void> {
    const out = await this.ec2(
      "DescribeImages",
      {
        "Owner.1": "self",
        "Filter.1.Name": `tag:${AMP_IMAGE_TAG_KEY}`,
        "Filter.1.Value.1": tag,
        "Filter.2.Name": "state",
        "Filter.2.Value.1": "available",
      },
      `EC2 DescribeImages tagged ${tag}`,
    );
    if (xmlItems(out, "imagesSet").length > 0) return;
    throw new ProfileRefused(`Failed to find an image with tag ${tag} due to: Failed to retrieve image with ${tag} tag.`);
  }

  /** Nova's validate_availability_zone: the zone among the Region's zones, else InvalidSubresource(resource='Nova availability zone'). */
  private async zone(zone: string): Promise<void> {
    const out = await this.ec2("DescribeAvailabilityZones", {}, "EC2 DescribeAvailabilityZones");
    if (xmlItems(out, "availabilityZoneInfo").some((z) => xmlText(z, "zoneName") === zone)) return;
    throw new ProfileRefused(`EC2 availability zone ${zone} not found.`);
  }

  /** Neutron's get_network failing with NetworkNotFound, for the subnet Ottava names instead. */
  private async subnet(subnet: string): Promise<void> {
    try {
      const out = await this.ec2("DescribeSubnets", { "SubnetId.1": subnet }, `EC2 DescribeSubnets of ${subnet}`);
      if (xmlItems(out, "subnetSet").some((s) => xmlText(s, "subnetId") === subnet)) return;
    } catch (e) {
      if (!String(errorName(e)).startsWith("InvalidSubnetID.")) throw e;
    }
    throw new ProfileRefused(`subnet not found (subnet id: ${subnet}).`);
  }

  /** Neutron's get_network failing with NetworkNotFound: the UUID names no VPC Ottava answered, or the VPC is gone. */
  private async vpc(network: string): Promise<void> {
    const vpc = await this.ids!.awsId(network, "vpc");
    if (vpc) {
      const out = await this.ec2("DescribeVpcs", { "Filter.1.Name": "vpc-id", "Filter.1.Value.1": vpc }, `EC2 DescribeVpcs of ${vpc}`);
      if (xmlItems(out, "vpcSet").some((v) => xmlText(v, "vpcId") === vpc)) return;
    }
    throw new ProfileRefused(`network not found (network id: ${network}).`);
  }
}

/**
 * The profile validator of OTTAVA_COMPUTE_DRIVER=ec2; with OTTAVA_NETWORK_DRIVER=vpc and `cloudIds`, it
 * checks valid_vip_networks too.
 */
export function ec2ProfileValidator(config: Pick<Config, "ec2Endpoint" | "networkDriver">, cloudIds?: CloudIdStore): ProfileValidator {
  const ids = config.networkDriver === "vpc" && cloudIds ? new AwsIds(apiRegion(), cloudIds) : undefined;
  return new Ec2ProfileValidator(ec2QueryClient(config), ids);
}

// The EC2 compute driver: each amphora is an EC2 instance. Octavia's compute/drivers/nova_driver.py,
// with image/drivers/glance_driver.py's image look-up by tag.
//
// Every call asks EC2 once and waits for nothing: getInstance answers a running instance, or throws
// ComputeWaitTimeout while it is pending (the flow asks again, as Octavia's ComputeRetry retries
// ComputeWait), or ComputeBuildError once it stopped for good. build is safe to run twice: its
// ClientToken is the amphora id, so EC2 answers the instance the first call launched (and when the
// second call's parameters differ, EC2 refuses the token and the instance is found by its tag).
//
// What Nova's config drive carries (the agent's key, amphora-agent.conf) goes in a Secrets Manager
// secret of the amphora's own (amphora-secret.ts), bound to its instance; the user data says where it is
// (user-data.ts). docs/data-plane.md gives the design.
import {
  CreatePlacementGroupCommand,
  DeletePlacementGroupCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  DescribeSubnetsCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type EC2Client,
  type Image,
  type _InstanceType,
  type Tag,
} from "@aws-sdk/client-ec2";
import {
  ComputeBuildError,
  ComputeWaitTimeout,
  isUnavailable,
  type ComputeBuildRequest,
  type ComputeDriver,
  type ComputeInstance,
  type Config,
  type Logger,
} from "@ottava/core";
import {
  AMPHORA_TAG_KEY,
  AMP_IMAGE_TAG_KEY,
  LOAD_BALANCER_TAG_KEY,
  STAGE_TAG_KEY,
  amphoraSecretName,
  instanceArn,
  instanceName,
  placementGroupName,
} from "../constants";
import type { SecretsManagerCall } from "../secretsmanager-client";
import { AmphoraSecrets } from "./amphora-secret";
import { USER_DATA_LIMIT, renderUserData, userDataSize, type ImageFile } from "./user-data";

/** The settings the driver reads. */
export type Ec2ComputeSettings = Pick<
  Config,
  | "stage"
  | "ampImageTag"
  | "ampBaseImageId"
  | "ampFlavorId"
  | "ampBootNetworkList"
  | "ampSecgroupList"
  | "secretsmanagerEndpoint"
  | "ampInstanceProfile"
>;

/** What the driver is given beyond EC2 and the settings. */
export interface Ec2ComputeOptions {
  /** Secrets Manager (secretsManagerClient): the amphorae's secrets. */
  secrets: SecretsManagerCall;
  /**
   * The controller CA's certificate (PEM), written to the amphora as client_ca.pem (Octavia's
   * [controller_worker] client_ca): the CA that issues the controller's client certificate. Asked at
   * each build; undefined fails the build.
   */
  controllerCa: () => Promise<string | undefined>;
  log?: Logger | undefined;
  /** The image scripts the first-boot user data carries (default: packages/aws/image/'s, embedded). */
  imageFiles?: readonly ImageFile[] | undefined;
}

/** The name of an AWS SDK error ("InvalidInstanceID.NotFound"), if it is one. */
const errorName = (e: unknown) => (e as { name?: unknown } | null)?.name;

export class Ec2ComputeDriver implements ComputeDriver {
  /** amp_boot_network_list by zone (zone → subnet id), asked of EC2 once: subnets never change zones. */
  #subnetsByZone: Promise<Map<string, string>> | undefined;

  private readonly log: Logger | undefined;
  private readonly secrets: AmphoraSecrets;

  constructor(
    private readonly ec2: EC2Client,
    private readonly settings: Ec2ComputeSettings,
    private readonly options: Ec2ComputeOptions,
  ) {
    this.log = options.log;
    this.secrets = new AmphoraSecrets(options.secrets);
  }

  /**
   * RunInstances of one amphora. The image: the newest by tag (the flavor profile's amp_image_tag, else
   * OTTAVA_AMP_IMAGE_TAG), else OTTAVA_AMP_BASE_IMAGE_ID. The type: the flavor profile's compute_flavor,
   * else OTTAVA_AMP_FLAVOR_ID. The subnet: the AZ profile's management_network, else the boot network
   * list's subnet in the amphora's zone. IMDSv2 only, one hop (no container on the instance reaches it).
   * `req.serverPem` and `req.agentConfig` go only in the amphora's secret, made before RunInstances
   * and bound to the instance after it (its tag ottava:instance-arn): not in the user data, the tags or
   * a log line. A build that fails for good deletes what it made; one that fails for now (a service
   * unavailable) leaves them to its retry, which finds them.
   */
  async build(req: ComputeBuildRequest): Promise<string> {
    const imageTag = req.imageTag ?? this.settings.ampImageTag;
    const imageId = await this.imageId(imageTag);
    const instanceType = req.computeFlavor ?? this.settings.ampFlavorId;
    if (!instanceType) throw new ComputeBuildError("no instance type: set OTTAVA_AMP_FLAVOR_ID, or compute_flavor in the flavor profile");
    const subnetId = req.managementNetwork ?? (await this.subnetOf(req.availabilityZone));
    const tags: Tag[] = [
      { Key: "Name", Value: instanceName(req.amphoraId) },
      { Key: STAGE_TAG_KEY, Value: this.settings.stage },
      { Key: AMPHORA_TAG_KEY, Value: req.amphoraId },
      ...(req.loadBalancerId ? [{ Key: LOAD_BALANCER_TAG_KEY, Value: req.loadBalancerId }] : []),
    ];
    const region = await this.ec2.config.region();
    const secretId = amphoraSecretName(this.settings.stage, req.amphoraId);
    const userData = await this.userData(region, secretId, !imageTag);
    try {
      // Tagged as the instance is, but for its Name.
      await this.secrets.create(
        secretId,
        { server_pem: req.serverPem, agent_conf: req.agentConfig },
        tags.filter((t) => t.Key !== "Name"),
      );
    } catch (e) {
      throw buildError(e);
    }
    let instanceId: string;
    let accountId: string;
    try {
      const out = await this.ec2.send(
        new RunInstancesCommand({
          ImageId: imageId,
          InstanceType: instanceType as _InstanceType, // any text: EC2 refuses a type it does not know
          MinCount: 1,
          MaxCount: 1,
          // AWS's idempotency: a retry with the same token answers the same instance, never a second one.
          ClientToken: req.amphoraId,
          SubnetId: subnetId,
          ...(this.settings.ampSecgroupList.length ? { SecurityGroupIds: this.settings.ampSecgroupList } : {}),
          UserData: Buffer.from(userData, "utf8").toString("base64"),
          ...(this.settings.ampInstanceProfile ? { IamInstanceProfile: instanceProfile(this.settings.ampInstanceProfile) } : {}),
          MetadataOptions: { HttpEndpoint: "enabled", HttpTokens: "required", HttpPutResponseHopLimit: 1 },
          ...(req.serverGroupId ? { Placement: { GroupName: req.serverGroupId } } : {}),
          TagSpecifications: [
            { ResourceType: "instance", Tags: tags },
            { ResourceType: "volume", Tags: tags },
          ],
        }),
      );
      const id = out.Instances?.[0]?.InstanceId;
      if (!id || !out.OwnerId) throw new Error("RunInstances answered no instance");
      instanceId = id;
      accountId = out.OwnerId; // the reservation's owner: this account
    } catch (e) {
      // A retry whose parameters changed since the first attempt (a newer tagged AMI appeared between
      // them): EC2 refuses the token again, and the instance the first attempt launched is the answer.
      const launched = errorName(e) === "IdempotentParameterMismatch" ? await this.launchedFor(req.amphoraId) : undefined;
      if (!launched) {
        if (!isUnavailable(e)) await this.undo(req.amphoraId, secretId);
        throw buildError(e);
      }
      ({ instanceId, accountId } = launched);
    }
    try {
      await this.secrets.bind(secretId, instanceArn(region, accountId, instanceId));
    } catch (e) {
      if (!isUnavailable(e)) await this.undo(req.amphoraId, secretId, instanceId);
      throw buildError(e);
    }
    this.log?.info("amphora instance launched", { amphoraId: req.amphoraId, computeId: instanceId, imageId, instanceType, subnetId });
    return instanceId;
  }

  /** The amphora's user data (no secret in it), within AWS's limit. */
  private async userData(region: string, secretId: string, firstBoot: boolean): Promise<string> {
    const clientCa = await this.options.controllerCa();
    if (!clientCa) throw new ComputeBuildError("no controller CA certificate for the amphorae's client_ca.pem: set OTTAVA_CA_CERTIFICATE");
    let userData: string;
    try {
      userData = renderUserData({
        region,
        secretId,
        secretsmanagerEndpoint: this.settings.secretsmanagerEndpoint ?? null,
        clientCa,
        firstBoot,
        ...(this.options.imageFiles ? { imageFiles: this.options.imageFiles } : {}),
      });
    } catch (e) {
      throw new ComputeBuildError((e as Error).message);
    }
    // AWS counts the raw text, before base64 (the emulator does not check it).
    const size = userDataSize(userData);
    if (size > USER_DATA_LIMIT) throw new ComputeBuildError(`the user data is ${size} bytes, more than AWS's limit of ${USER_DATA_LIMIT}`);
    return userData;
  }

  /** What a build that failed for good made goes: its instance, if launched, and its secret. Its own failures are logged. */
  private async undo(amphoraId: string, secretId: string, instanceId?: string): Promise<void> {
    try {
      if (instanceId) await this.ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      await this.secrets.delete(secretId);
    } catch (e) {
      this.log?.warn("could not delete what a failed build made", { amphoraId, computeId: instanceId, error: String(errorName(e)) });
    }
  }

  /** The instance of this stage launched for the amphora (its tag), not terminated nor terminating, if any. */
  private async launchedFor(amphoraId: string): Promise<{ instanceId: string; accountId: string } | undefined> {
    const out = await this.ec2.send(
      new DescribeInstancesCommand({
        Filters: [
          { Name: `tag:${AMPHORA_TAG_KEY}`, Values: [amphoraId] },
          { Name: `tag:${STAGE_TAG_KEY}`, Values: [this.settings.stage] },
          { Name: "instance-state-name", Values: ["pending", "running", "stopping", "stopped"] },
        ],
      }),
    );
    const reservation = out.Reservations?.find((r) => r.Instances?.length);
    const instanceId = reservation?.Instances?.[0]?.InstanceId;
    if (!instanceId || !reservation?.OwnerId) return undefined;
    this.log?.info("amphora instance launched by an earlier attempt", { amphoraId, computeId: instanceId });
    return { instanceId, accountId: reservation.OwnerId };
  }

  /** DescribeInstances of one instance, once (see ComputeDriver.getInstance). */
  async getInstance(computeId: string): Promise<ComputeInstance> {
    let out;
    try {
      out = await this.ec2.send(new DescribeInstancesCommand({ InstanceIds: [computeId] }));
    } catch (e) {
      // EC2 is eventually consistent: an instance just launched may not be found yet.
      if (errorName(e) === "InvalidInstanceID.NotFound") throw new ComputeWaitTimeout(computeId);
      throw e;
    }
    const instance = out.Reservations?.[0]?.Instances?.[0];
    const state = instance?.State?.Name;
    if (!instance || state === "pending") throw new ComputeWaitTimeout(computeId);
    if (state !== "running") {
      const reason = instance.StateReason?.Message ?? instance.StateTransitionReason ?? "no reason given";
      throw new ComputeBuildError(`instance ${computeId} is ${state}: ${reason}`);
    }
    if (!instance.PrivateIpAddress) throw new ComputeWaitTimeout(computeId);
    return {
      compute_id: computeId,
      // The primary interface's address: the instance was launched with it in its management subnet.
      lb_network_ip: instance.PrivateIpAddress,
      image_id: instance.ImageId ?? null,
      compute_flavor: instance.InstanceType ?? null,
      cached_zone: instance.Placement?.AvailabilityZone ?? null,
    };
  }

  /**
   * TerminateInstances, waiting for nothing (an instance EC2 does not know is already deleted: Octavia's
   * NotFound), then the amphora's secret (one already gone is deleted).
   */
  async delete(computeId: string, amphoraId: string): Promise<void> {
    try {
      await this.ec2.send(new TerminateInstancesCommand({ InstanceIds: [computeId] }));
    } catch (e) {
      if (errorName(e) !== "InvalidInstanceID.NotFound") throw e;
      this.log?.warn("EC2 instance not found; assuming already deleted", { computeId });
    }
    await this.secrets.delete(amphoraSecretName(this.settings.stage, amphoraId));
  }

  /**
   * Octavia's create_server_group for anti-affinity: the load balancer's spread placement group (each
   * instance on distinct hardware), made once; answers its name, for build's serverGroupId.
   */
  async createServerGroup(loadBalancerId: string): Promise<string> {
    const name = placementGroupName(this.settings.stage, loadBalancerId);
    try {
      await this.ec2.send(
        new CreatePlacementGroupCommand({
          GroupName: name,
          Strategy: "spread",
          TagSpecifications: [
            {
              ResourceType: "placement-group",
              Tags: [
                { Key: STAGE_TAG_KEY, Value: this.settings.stage },
                { Key: LOAD_BALANCER_TAG_KEY, Value: loadBalancerId },
              ],
            },
          ],
        }),
      );
    } catch (e) {
      if (errorName(e) !== "InvalidPlacementGroup.Duplicate") throw e; // a retry: made already
    }
    return name;
  }

  /**
   * Octavia's delete_server_group: a group already gone is deleted. EC2 refuses to delete a group while
   * an instance in it is not terminated (Nova does not): then false, ask again later.
   */
  async deleteServerGroup(name: string): Promise<boolean> {
    try {
      await this.ec2.send(new DeletePlacementGroupCommand({ GroupName: name }));
    } catch (e) {
      if (errorName(e) === "InvalidPlacementGroup.InUse") return false;
      if (errorName(e) !== "InvalidPlacementGroup.Unknown") throw e;
    }
    return true;
  }

  /**
   * The image to boot: the newest available AMI of this account (by CreationDate) tagged
   * AMP_IMAGE_TAG_KEY = `tag` (Octavia's get_image_id_by_tag, which warns when several carry the tag);
   * without a tag, OTTAVA_AMP_BASE_IMAGE_ID.
   */
  private async imageId(tag: string | undefined | null): Promise<string> {
    if (!tag) {
      if (this.settings.ampBaseImageId) return this.settings.ampBaseImageId;
      throw new ComputeBuildError(
        "no image: set OTTAVA_AMP_IMAGE_TAG (or amp_image_tag in the flavor profile), or OTTAVA_AMP_BASE_IMAGE_ID",
      );
    }
    const images: Image[] = [];
    let NextToken: string | undefined;
    do {
      const out = await this.ec2.send(
        new DescribeImagesCommand({
          Owners: ["self"],
          Filters: [
            { Name: `tag:${AMP_IMAGE_TAG_KEY}`, Values: [tag] },
            { Name: "state", Values: ["available"] },
          ],
          NextToken,
        }),
      );
      images.push(...(out.Images ?? []));
      NextToken = out.NextToken;
    } while (NextToken);
    // CreationDate is ISO 8601 in UTC: its text sorts as its time does.
    images.sort((a, b) => (b.CreationDate ?? "").localeCompare(a.CreationDate ?? ""));
    const newest = images[0]?.ImageId;
    if (!newest) throw new ComputeBuildError(`Failed to retrieve image with ${tag} tag.`);
    if (images.length > 1)
      this.log?.warn("A single image should be tagged with the amphora image tag, but several were found; using the newest", {
        tag,
        imageId: newest,
        found: images.length,
      });
    return newest;
  }

  /**
   * The management subnet of `zone`: the one of amp_boot_network_list that EC2 says is in it. Without a
   * zone, the list's first subnet (EC2 boots an instance in one subnet, where Nova would plug them all).
   */
  private async subnetOf(zone: string | null): Promise<string> {
    const list = this.settings.ampBootNetworkList;
    if (list.length === 0)
      throw new ComputeBuildError("no management subnet: set OTTAVA_AMP_BOOT_NETWORK_LIST, or management_network in the AZ profile");
    if (zone === null) return list[0]!;
    this.#subnetsByZone ??= this.describeSubnets(list).catch((e: unknown) => {
      this.#subnetsByZone = undefined; // ask again next time
      throw e;
    });
    const subnet = (await this.#subnetsByZone).get(zone);
    if (!subnet) throw new ComputeBuildError(`no subnet of OTTAVA_AMP_BOOT_NETWORK_LIST is in zone ${zone}`);
    return subnet;
  }

  private async describeSubnets(ids: string[]): Promise<Map<string, string>> {
    const out = await this.ec2.send(new DescribeSubnetsCommand({ SubnetIds: ids }));
    const byZone = new Map<string, string>();
    for (const s of out.Subnets ?? []) {
      if (!s.AvailabilityZone || !s.SubnetId) continue;
      const other = byZone.get(s.AvailabilityZone);
      if (other)
        throw new ComputeBuildError(`OTTAVA_AMP_BOOT_NETWORK_LIST has two subnets in zone ${s.AvailabilityZone}: ${other}, ${s.SubnetId}`);
      byZone.set(s.AvailabilityZone, s.SubnetId);
    }
    return byZone;
  }
}

/** Octavia's ComputeBuildException; the error stays its cause (one marked unavailable is still retried by the flow: isUnavailable reads causes). */
const buildError = (e: unknown) =>
  e instanceof ComputeBuildError ? e : new ComputeBuildError(`${String(errorName(e) ?? "Error")}: ${(e as Error).message}`, { cause: e });

/** OTTAVA_AMP_INSTANCE_PROFILE: an instance profile's ARN, or its name. */
const instanceProfile = (profile: string) => (profile.startsWith("arn:") ? { Arn: profile } : { Name: profile });

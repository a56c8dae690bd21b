// The orphan sweep's AWS side (core's OrphanSweeper; the rule is core's services/sweep.ts): what the
// EC2 compute driver and the vpc network driver made for this stage, each with the owner its tags or
// name give. Instances and amphorae's ENIs carry the amphora's id, secrets are named for it
// (ottava/<stage>/amphora/<id>), placement groups, VIP reservation ENIs and security groups carry the
// load balancer's id. Only what this stage made is listed, by its tag or its name's prefix.
import {
  DeleteNetworkInterfaceCommand,
  DeletePlacementGroupCommand,
  DeleteSecurityGroupCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DescribePlacementGroupsCommand,
  DescribeSecurityGroupsCommand,
  DetachNetworkInterfaceCommand,
  TerminateInstancesCommand,
  type EC2Client,
  type Tag,
} from "@aws-sdk/client-ec2";
import type { CloudResource, Config, Logger, OrphanSweeper } from "@ottava/core";
import { AmphoraSecrets } from "./compute/amphora-secret";
import { AMPHORA_TAG_KEY, CREATED_AT_TAG_KEY, LOAD_BALANCER_TAG_KEY, STAGE_TAG_KEY, amphoraSecretName } from "./constants";
import { ec2Client, type AwsClientDecorator } from "./ec2-client";
import { secretsManagerClient, type SecretsManagerCall } from "./secretsmanager-client";

export const INSTANCE = "instance";
export const SECRET = "secret";
export const PLACEMENT_GROUP = "placement-group";
export const NETWORK_INTERFACE = "network-interface";
export const SECURITY_GROUP = "security-group";

const errorName = (e: unknown) => (e as { name?: unknown } | null)?.name;
const tagOf = (tags: Tag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value;

interface ListSecretsOutput {
  SecretList?: { Name?: string }[];
  NextToken?: string;
}

/** The sweeper of the settings' stage, on clients to OTTAVA_EC2_ENDPOINT and OTTAVA_SECRETSMANAGER_ENDPOINT. */
export const ec2OrphanSweeper = (
  config: Pick<Config, "ec2Endpoint" | "secretsmanagerEndpoint" | "stage">,
  decorate: AwsClientDecorator,
  log?: Logger,
): OrphanSweeper => new Ec2OrphanSweeper(ec2Client(config, decorate), secretsManagerClient(config), config.stage, log);

export class Ec2OrphanSweeper implements OrphanSweeper {
  private readonly secrets: AmphoraSecrets;

  constructor(
    private readonly ec2: EC2Client,
    private readonly secretsManager: SecretsManagerCall,
    private readonly stage: string,
    private readonly log?: Logger,
  ) {
    this.secrets = new AmphoraSecrets(secretsManager);
  }

  async *resources(): AsyncIterable<CloudResource> {
    yield* this.instances();
    yield* this.amphoraSecrets();
    yield* this.placementGroups();
    yield* this.networkInterfaces();
    yield* this.securityGroups();
  }

  async remove(r: CloudResource): Promise<void> {
    if (r.kind === INSTANCE) {
      try {
        await this.ec2.send(new TerminateInstancesCommand({ InstanceIds: [r.id] }));
      } catch (e) {
        if (errorName(e) !== "InvalidInstanceID.NotFound") throw e;
      }
    } else if (r.kind === SECRET) {
      await this.secrets.delete(r.id);
    } else if (r.kind === PLACEMENT_GROUP) {
      try {
        await this.ec2.send(new DeletePlacementGroupCommand({ GroupName: r.id }));
      } catch (e) {
        // Its instances still terminating: the next pass deletes it.
        if (errorName(e) === "InvalidPlacementGroup.InUse")
          this.log?.info("placement group still in use; swept next time", { group: r.id });
        else if (errorName(e) !== "InvalidPlacementGroup.Unknown") throw e;
      }
    } else if (r.kind === NETWORK_INTERFACE) {
      await this.removeNetworkInterface(r.id);
    } else if (r.kind === SECURITY_GROUP) {
      try {
        await this.ec2.send(new DeleteSecurityGroupCommand({ GroupId: r.id }));
      } catch (e) {
        // An ENI still in it (being removed in this pass): the next pass deletes it.
        if (errorName(e) === "DependencyViolation") this.log?.info("security group still in use; swept next time", { group: r.id });
        else if (errorName(e) !== "InvalidGroup.NotFound") throw e;
      }
    }
  }

  /** An ENI: detached first if it is attached (deleted by the next pass, once AWS has detached it). */
  private async removeNetworkInterface(id: string): Promise<void> {
    try {
      const out = await this.ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }));
      const attachment = out.NetworkInterfaces?.[0]?.Attachment;
      if (attachment?.AttachmentId && attachment.Status !== "detached") {
        await this.ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: attachment.AttachmentId, Force: true }));
        this.log?.info("network interface detached; deleted next time", { networkInterface: id });
        return;
      }
      await this.ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }));
    } catch (e) {
      if (errorName(e) === "InvalidNetworkInterface.InUse")
        this.log?.info("network interface still in use; swept next time", { networkInterface: id });
      else if (errorName(e) !== "InvalidNetworkInterfaceID.NotFound") throw e;
    }
  }

  /** The stage's instances that are not terminated (nor terminating), each with its amphora. */
  private async *instances(): AsyncIterable<CloudResource> {
    let NextToken: string | undefined;
    do {
      const out = await this.ec2.send(
        new DescribeInstancesCommand({
          Filters: [
            { Name: `tag:${STAGE_TAG_KEY}`, Values: [this.stage] },
            { Name: "instance-state-name", Values: ["pending", "running", "stopping", "stopped"] },
          ],
          NextToken,
        }),
      );
      for (const i of (out.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
        const amphoraId = tagOf(i.Tags, AMPHORA_TAG_KEY);
        if (i.InstanceId && amphoraId) yield { kind: INSTANCE, id: i.InstanceId, amphoraId };
      }
      NextToken = out.NextToken;
    } while (NextToken);
  }

  /** The stage's amphora secrets (their names' prefix), each with its amphora. */
  private async *amphoraSecrets(): AsyncIterable<CloudResource> {
    const prefix = amphoraSecretName(this.stage, "");
    let NextToken: string | undefined;
    do {
      const out = (await this.secretsManager(
        "ListSecrets",
        { Filters: [{ Key: "name", Values: [prefix] }], ...(NextToken ? { NextToken } : {}) },
        `Secrets Manager ListSecrets of ${prefix}*`,
      )) as ListSecretsOutput;
      for (const s of out.SecretList ?? []) {
        // The name filter matches a prefix of words; only the exact prefix is this stage's.
        if (s.Name?.startsWith(prefix)) yield { kind: SECRET, id: s.Name, amphoraId: s.Name.slice(prefix.length) };
      }
      NextToken = out.NextToken;
    } while (NextToken);
  }

  /** The stage's placement groups (anti-affinity), each with its load balancer. */
  private async *placementGroups(): AsyncIterable<CloudResource> {
    const out = await this.ec2.send(
      new DescribePlacementGroupsCommand({ Filters: [{ Name: `tag:${STAGE_TAG_KEY}`, Values: [this.stage] }] }),
    );
    for (const g of out.PlacementGroups ?? []) {
      const loadBalancerId = tagOf(g.Tags, LOAD_BALANCER_TAG_KEY);
      if (g.GroupName && loadBalancerId && tagOf(g.Tags, STAGE_TAG_KEY) === this.stage)
        yield { kind: PLACEMENT_GROUP, id: g.GroupName, loadBalancerId };
    }
  }

  /** The stage's ENIs (the vpc driver's): an amphora's with its amphora, a VIP reservation with its load balancer. */
  private async *networkInterfaces(): AsyncIterable<CloudResource> {
    let NextToken: string | undefined;
    do {
      const out = await this.ec2.send(
        new DescribeNetworkInterfacesCommand({ Filters: [{ Name: `tag:${STAGE_TAG_KEY}`, Values: [this.stage] }], NextToken }),
      );
      for (const n of out.NetworkInterfaces ?? []) {
        const tags = n.TagSet;
        if (!n.NetworkInterfaceId || tagOf(tags, STAGE_TAG_KEY) !== this.stage) continue;
        const amphoraId = tagOf(tags, AMPHORA_TAG_KEY);
        const loadBalancerId = tagOf(tags, LOAD_BALANCER_TAG_KEY);
        if (amphoraId) yield { kind: NETWORK_INTERFACE, id: n.NetworkInterfaceId, amphoraId };
        else if (loadBalancerId)
          yield { kind: NETWORK_INTERFACE, id: n.NetworkInterfaceId, loadBalancerId, createdAt: tagOf(tags, CREATED_AT_TAG_KEY) };
      }
      NextToken = out.NextToken;
    } while (NextToken);
  }

  /** The stage's load-balancer security groups (the vpc driver's), each with its load balancer. */
  private async *securityGroups(): AsyncIterable<CloudResource> {
    let NextToken: string | undefined;
    do {
      const out = await this.ec2.send(
        new DescribeSecurityGroupsCommand({ Filters: [{ Name: `tag:${STAGE_TAG_KEY}`, Values: [this.stage] }], NextToken }),
      );
      for (const g of out.SecurityGroups ?? []) {
        const loadBalancerId = tagOf(g.Tags, LOAD_BALANCER_TAG_KEY);
        if (g.GroupId && loadBalancerId && tagOf(g.Tags, STAGE_TAG_KEY) === this.stage)
          yield { kind: SECURITY_GROUP, id: g.GroupId, loadBalancerId, createdAt: tagOf(g.Tags, CREATED_AT_TAG_KEY) };
      }
      NextToken = out.NextToken;
    } while (NextToken);
  }
}

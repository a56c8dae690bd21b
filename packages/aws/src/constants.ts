// The names Ottava gives what it makes or finds in AWS: tag keys, placement groups.

/**
 * The tag key of the amphora images: the newest of the account's own AMIs whose tag AMP_IMAGE_TAG_KEY
 * has the value of the image tag (a flavor profile's amp_image_tag, else OTTAVA_AMP_IMAGE_TAG) is
 * booted. Glance tags are bare labels; AWS tags are key and value, so the label is the value here.
 */
export const AMP_IMAGE_TAG_KEY = "ottava:amp-image-tag";
/** The stage (OTTAVA_STAGE) that made an instance. */
export const STAGE_TAG_KEY = "ottava:stage";
/** The amphora an instance is. */
export const AMPHORA_TAG_KEY = "ottava:amphora-id";
/** The load balancer that amphora serves. */
export const LOAD_BALANCER_TAG_KEY = "ottava:loadbalancer-id";

/** An instance's Name tag: Octavia's server name, "amphora-<id>". */
export const instanceName = (amphoraId: string) => `amphora-${amphoraId}`;
/** The spread placement group of a load balancer's amphorae (anti-affinity): Octavia's server group "octavia-lb-<id>". */
export const placementGroupName = (stage: string, loadBalancerId: string) => `ottava-${stage}-lb-${loadBalancerId}`;

/**
 * An amphora's secret in Secrets Manager: its agent's server certificate and key, and its
 * amphora-agent.conf (the heartbeat key), which Octavia puts in the config drive.
 */
export const amphoraSecretName = (stage: string, amphoraId: string) => `ottava/${stage}/amphora/${amphoraId}`;
/**
 * The tag that binds an amphora's secret to its instance: the instance's ARN. The amphora role may read
 * a secret only where this tag equals the calling instance's ARN (`${ec2:SourceInstanceARN}`).
 */
export const INSTANCE_ARN_TAG_KEY = "ottava:instance-arn";

/** The AWS partition of a Region ("aws", "aws-cn", "aws-us-gov"), for the ARNs Ottava writes. */
export const partitionOf = (region: string) => (region.startsWith("cn-") ? "aws-cn" : region.startsWith("us-gov-") ? "aws-us-gov" : "aws");
/** An EC2 instance's ARN: what `ec2:SourceInstanceARN` is in the requests its role credentials sign. */
export const instanceArn = (region: string, accountId: string, instanceId: string) =>
  `arn:${partitionOf(region)}:ec2:${region}:${accountId}:instance/${instanceId}`;

/**
 * Tenancy of the vpc network driver: a project may use a VPC, subnet, ENI or security group tagged
 * PROJECT_TAG_KEY = its id, or one the operator marked SHARED_TAG_KEY = "true" (Neutron's own and shared
 * resources), unless OTTAVA_ALLOW_INVISIBLE_RESOURCE_USAGE lifts the rule.
 */
export const PROJECT_TAG_KEY = "ottava:project";
export const SHARED_TAG_KEY = "ottava:shared";
/**
 * What an ENI made by the vpc driver is: "vip" (a load balancer's VIP reservation), "vrrp" (an amphora's
 * port in the VIP subnet) or "member" (an amphora's port on a member network: another VPC).
 */
export const ENI_ROLE_TAG_KEY = "ottava:eni-role";
/** The security group of a load balancer's VIP ports (Octavia's "lb-<id>"). */
export const lbSecurityGroupName = (stage: string, loadBalancerId: string) => `ottava-${stage}-lb-${loadBalancerId}`;
/**
 * The security group of a load balancer's amphorae's ports on a member network (a VPC other than the
 * VIP's; one group per VPC, each of this name): no ingress rule, EC2's default egress (all).
 */
export const memberSecurityGroupName = (stage: string, loadBalancerId: string) => `ottava-${stage}-lb-${loadBalancerId}-members`;
/**
 * When the vpc driver made a resource the API makes before the load balancer's record exists (its VIP
 * reservation ENI and security group: allocate_vip runs before the create is written), ISO 8601: the orphan
 * sweep leaves such a resource alone while it is young, since its owner may still be being written.
 */
export const CREATED_AT_TAG_KEY = "ottava:created-at";

/**
 * What marks a Secrets Manager secret as a TLS certificate, CA or CRL that listeners and pools may name
 * (OTTAVA_CERT_MANAGER=secretsmanager): the value "true". The certificate manager reads no other secret,
 * so Ottava's own (the amphorae's) can never be named as a reference; PROJECT_TAG_KEY or SHARED_TAG_KEY
 * then says which projects may use it, as Barbican's ACL does.
 */
export const CERTIFICATE_TAG_KEY = "ottava:certificate";

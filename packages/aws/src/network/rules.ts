// A load balancer's security group in EC2 made to hold exactly Octavia's rules (core's vipSecurityGroupRules).
import type { SecurityGroupRule } from "@ottava/core";
import type { AwsQueryCall } from "@ottava/edge/aws-query";

/**
 * Makes group `groupId`'s ingress rules equal `rules`: the missing ones authorized, the others revoked
 * (egress untouched). Idempotent: a second call with the same rules changes nothing.
 */
export async function syncSecurityGroupRules(ec2: AwsQueryCall, groupId: string, rules: readonly SecurityGroupRule[]): Promise<void> {
  void ec2;
  void groupId;
  void rules;
  throw new Error("syncSecurityGroupRules: being written (issue 22)");
}

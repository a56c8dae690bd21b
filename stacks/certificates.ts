// Who may read the certificate secrets with OTTAVA_CERT_MANAGER=secretsmanager (packages/aws/src/certs, in
// Barbican's place): the API, which checks every reference a listener or pool names, and, with the REST
// amphora driver, the tasks that push the listeners' configuration to the agents (CERT_TASKS), which
// upload the PEMs. They may describe and read only secrets tagged as certificates of this stage, whatever
// their names (an operator may store them with `npm run cert` or otherwise); which project may use which
// is the manager's check of the ottava:project and ottava:shared tags, since the functions act for every
// project. docs/data-plane.md, "Certificates on AWS", gives the design.
import { CERT_TASKS } from "@ottava/controller/flows";
import type { DeployPlan } from "./config";

/** The tag keys of packages/aws/src/constants.ts (CERTIFICATE_TAG_KEY, STAGE_TAG_KEY) on a certificate secret. */
const CERTIFICATE_TAG_KEY = "ottava:certificate";
const STAGE_TAG_KEY = "ottava:stage";

/**
 * The statements of a certificate reader: DescribeSecret (the manager reads the tags first) and
 * GetSecretValue of the stage's certificate secrets; kms:Decrypt with the customer-managed keys of
 * OTTAVA_CERT_KMS_KEY_ARNS, through Secrets Manager only. A secret under the account's aws/secretsmanager
 * key needs no KMS grant. Nothing when the deploy keeps no certificates in Secrets Manager.
 */
export function certificateReadPermissions(plan: DeployPlan) {
  if (plan.certManager !== "secretsmanager") return [];
  const partition = aws.getPartitionOutput().partition;
  const region = aws.getRegionOutput().region;
  const account = aws.getCallerIdentityOutput().accountId;
  return [
    {
      actions: ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"],
      resources: [$interpolate`arn:${partition}:secretsmanager:${region}:${account}:secret:*`],
      conditions: [
        { test: "StringEquals", variable: `secretsmanager:ResourceTag/${CERTIFICATE_TAG_KEY}`, values: ["true"] },
        { test: "StringEquals", variable: `secretsmanager:ResourceTag/${STAGE_TAG_KEY}`, values: [plan.stage] },
      ],
    },
    ...(plan.certKmsKeyArns.length > 0
      ? [
          {
            actions: ["kms:Decrypt"],
            resources: plan.certKmsKeyArns,
            conditions: [
              { test: "StringEquals", variable: "kms:ViaService", values: [$interpolate`secretsmanager.${region}.amazonaws.com`] },
            ],
          },
        ]
      : []),
  ];
}

/** Does this task's function read certificates (the REST driver's configuration push)? */
export const readsCertificates = (task: string, plan: DeployPlan) =>
  plan.amphoraDriver === "rest" && (CERT_TASKS as readonly string[]).includes(task);

// What the EC2 driver's tests give it beyond EC2: Secrets Manager on the file's moto, a controller CA
// certificate (public, made up), and image scripts for the first-boot path (placeholders: the real
// ones are packages/aws/image/'s).
import { secretsManagerClient, type Ec2ComputeOptions, type ImageFile, type SecretsManagerCall } from "../../src";
import { MOTO_CLIENT, type Moto } from "./moto";

/** Secrets Manager on the emulator, through the product's signed JSON client. */
export const motoSecretsManager = (moto: Pick<Moto, "endpoint">): SecretsManagerCall =>
  secretsManagerClient(
    { secretsmanagerEndpoint: moto.endpoint },
    { region: MOTO_CLIENT.region, credentials: async () => MOTO_CLIENT.credentials },
  );

/** A controller CA certificate as the amphora's client_ca.pem gets it (its text only matters here). */
export const TEST_CONTROLLER_CA = "-----BEGIN CERTIFICATE-----\nTEST-CONTROLLER-CA\n-----END CERTIFICATE-----\n";

/** Stand-ins for packages/aws/image/'s scripts, for the first-boot user data. */
export const TEST_IMAGE_FILES: readonly ImageFile[] = [
  { name: "install.sh", executable: true, content: "#!/bin/sh\n# test stand-in for packages/aws/image/install.sh\nexit 0\n" },
  { name: "ottava-amphora-configure", executable: true, content: "#!/usr/bin/python3\n# test stand-in\n" },
];

/** The driver's options for tests: moto's Secrets Manager, the test CA and the stand-in image scripts. */
export const ec2DriverOptions = (moto: Pick<Moto, "endpoint">, over: Partial<Ec2ComputeOptions> = {}): Ec2ComputeOptions => ({
  secrets: motoSecretsManager(moto),
  controllerCa: async () => TEST_CONTROLLER_CA,
  imageFiles: TEST_IMAGE_FILES,
  ...over,
});

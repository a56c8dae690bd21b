// The API's /network (OTTAVA_NETWORK_DRIVER=vpc): Neutron's version document and look-ups answered from
// the VPC (moto), through the app as a client reaches it; Neutron's 404 body for what is not found; no
// /network at all with another network driver. (Which project sees what: packages/aws/test/network-lookups.test.ts;
// under noauth every caller is an admin, as in Octavia.) Also the zone profiles' valid_vip_networks,
// checked against the VPCs with the ec2 compute driver.
import { CreateSubnetCommand, CreateTagsCommand, CreateVpcCommand } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { awsUuid } from "@ottava/aws/network";
import { MOTO_CLIENT, ec2Bed, startMoto, type Ec2Bed, type Moto } from "@ottava/aws/testing";
import { activeLb, fault, inProcessApp, pick } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let moto: Moto;
let bed: Ec2Bed;
let t: App;
const aws: Record<string, string> = {};
const uuid = (awsId: string) => awsUuid(MOTO_CLIENT.region, awsId);

beforeAll(async () => {
  moto = await startMoto();
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  bed = await ec2Bed(moto, "198.18.96.0");
  aws.vpc = (await bed.ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.112.0/20" }))).Vpc!.VpcId!;
  aws.subnet = (
    await bed.ec2.send(new CreateSubnetCommand({ VpcId: aws.vpc, CidrBlock: "198.18.112.0/24", AvailabilityZone: "us-east-1b" }))
  ).Subnet!.SubnetId!;
  await bed.ec2.send(
    new CreateTagsCommand({
      Resources: [aws.vpc, aws.subnet],
      Tags: [
        { Key: "Name", Value: "web-net" },
        { Key: "ottava:project", Value: "web-project" },
      ],
    }),
  );
  t = await inProcessApp({
    OTTAVA_NETWORK_DRIVER: "vpc",
    OTTAVA_COMPUTE_DRIVER: "ec2",
    OTTAVA_EC2_ENDPOINT: moto.endpoint,
    OTTAVA_AMP_BOOT_NETWORK_LIST: Object.values(bed.subnets).join(","),
  });
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  bed?.ec2.destroy();
  await moto?.stop();
});

describe("/network", () => {
  it("answers Neutron's version document and its v2.0 resources", async () => {
    const root = await t.call("GET", "/network");
    expect(root.status).toBe(200);
    expect(root.body).toEqual({
      versions: [{ id: "v2.0", status: "CURRENT", links: [{ href: "http://localhost/network/v2.0/", rel: "self" }] }],
    });
    expect((await t.call("GET", "/network/")).body).toEqual(root.body);
    const v2 = await t.call("GET", "/network/v2.0");
    expect(v2.body.resources.map((r: { collection: string }) => r.collection)).toEqual(["subnets", "networks", "ports", "security_groups"]);
    expect(v2.body.resources[0]).toEqual({
      name: "subnet",
      collection: "subnets",
      links: [{ href: "http://localhost/network/v2.0/subnets", rel: "self" }],
    });
  });

  it("finds a subnet by Name tag, AWS id and UUID, and a network by UUID, as the clients ask", async () => {
    const byName = await t.call("GET", "/network/v2.0/subnets?name=web-net");
    expect(byName.status).toBe(200);
    expect(byName.body.subnets).toHaveLength(1);
    const subnet = byName.body.subnets[0];
    expect(subnet).toMatchObject({
      id: uuid(aws.subnet!),
      name: "web-net",
      network_id: uuid(aws.vpc!),
      cidr: "198.18.112.0/24",
      gateway_ip: "198.18.112.1",
    });
    expect((await t.call("GET", `/network/v2.0/subnets?id=${aws.subnet}`)).body).toEqual({ subnets: [subnet] });
    expect((await t.call("GET", `/network/v2.0/subnets/${subnet.id}`)).body).toEqual({ subnet });
    expect((await t.call("GET", `/network/v2.0/subnets/${subnet.id}?fields=id&fields=name`)).body).toEqual({
      subnet: { id: subnet.id, name: "web-net" },
    });
    const network = await t.call("GET", `/network/v2.0/networks/${uuid(aws.vpc!)}`);
    expect(network.body.network).toMatchObject({ id: uuid(aws.vpc!), name: "web-net", subnets: [subnet.id], mtu: 9001 });
    expect((await t.call("GET", "/network/v2.0/security-groups?name=default")).body.security_groups.length).toBeGreaterThan(0);
    expect((await t.call("GET", "/network/v2.0/ports")).body).toEqual({ ports: [] });
  });

  it("answers Neutron's 404 for what is not found, and never a management subnet", async () => {
    const unknown = "0b7e2f4c-1d2a-4c3b-9e8f-7a6b5c4d3e2f";
    expect(pick(await t.call("GET", `/network/v2.0/subnets/${unknown}`))).toEqual({
      status: 404,
      body: { NeutronError: { type: "SubnetNotFound", message: `Subnet ${unknown} could not be found.`, detail: "" } },
    });
    const management = bed.subnets["us-east-1a"]!;
    expect(pick(await t.call("GET", `/network/v2.0/subnets/${management}`))).toEqual({
      status: 404,
      body: { NeutronError: { type: "SubnetNotFound", message: `Subnet ${management} could not be found.`, detail: "" } },
    });
    expect((await t.call("GET", `/network/v2.0/subnets?id=${management}`)).body).toEqual({ subnets: [] });
    expect(pick(await t.call("GET", "/network/v2.0/ports/nothing"))).toEqual({
      status: 404,
      body: { NeutronError: { type: "PortNotFound", message: "Port nothing could not be found.", detail: "" } },
    });
    expect((await t.call("GET", "/network/v2.0/security-groups/sg-0000000000")).body.NeutronError.message).toBe(
      "Security group sg-0000000000 does not exist",
    );
    // Look-ups only: no other resource, no change.
    expect((await t.call("GET", "/network/v2.0/routers")).status).toBe(404);
    expect((await t.call("POST", "/network/v2.0/subnets", { subnet: {} })).status).toBe(404);
  });

  it("is not there with another network driver", async () => {
    const other = await inProcessApp();
    expect(pick(await other.call("GET", "/network/v2.0/subnets"))).toEqual(fault(404, "The resource could not be found."));
    expect((await other.call("GET", "/network")).status).toBe(404);
  });
});

describe("availability zone profiles' valid_vip_networks with the vpc network driver", () => {
  const zoneProfile = (data: Record<string, unknown>) =>
    t.call("POST", "/v2/lbaas/availabilityzoneprofiles", {
      availability_zone_profile: { name: "azp", provider_name: "amphora", availability_zone_data: JSON.stringify(data) },
    });

  it("must each be the UUID of a VPC (Octavia's get_network of each)", async () => {
    const unknown = "0b7e2f4c-1d2a-4c3b-9e8f-7a6b5c4d3e2f";
    const refused = (id: string) => fault(400, `Provider 'amphora' reports error: network not found (network id: ${id}).`);
    expect(pick(await zoneProfile({ valid_vip_networks: [unknown] }))).toEqual(refused(unknown));
    // An AWS id is not a network id of the API: the LB's vip_network_id, compared with these, is the VPC's UUID.
    expect(pick(await zoneProfile({ valid_vip_networks: [aws.vpc] }))).toEqual(refused(aws.vpc!));
    // A subnet's UUID is not a network's.
    await t.call("GET", `/network/v2.0/subnets?id=${aws.subnet}`);
    expect(pick(await zoneProfile({ valid_vip_networks: [uuid(aws.subnet!)] }))).toEqual(refused(uuid(aws.subnet!)));
    // The UUID the look-ups answered for the VPC (remembered then).
    await t.call("GET", `/network/v2.0/networks?id=${aws.vpc}`);
    expect((await zoneProfile({ valid_vip_networks: [uuid(aws.vpc!)], management_network: bed.subnets["us-east-1b"] })).status).toBe(201);
  });
});

describe("member subnets with the vpc network driver, checked before anything is written", () => {
  const web = { "x-project-id": "web-project" };
  const NOWHERE = "8f2d6a51-3c0e-4b7a-9d11-0000000000ff";

  it("a member create, a batch update and a fully populated create naming a subnet that is not there: 400, nothing written", async () => {
    // An ACTIVE load balancer on the VPC's subnet, written as its create flow would (this app's instances never boot: no image).
    const lbId = (
      await activeLb(t.store, { fields: { project_id: "web-project", vip_subnet_id: uuid(aws.subnet!), vip_network_id: uuid(aws.vpc!) } })
    ).id;
    const pool = await t.call(
      "POST",
      "/v2/lbaas/pools",
      { pool: { loadbalancer_id: lbId, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" } },
      web,
    );
    expect(pool.status, JSON.stringify(pool.body)).toBe(201);
    await t.settle();
    const members = `/v2/lbaas/pools/${pool.body.pool.id}/members`;
    const refused = fault(400, `Subnet ${NOWHERE} not found.`);
    expect(
      pick(await t.call("POST", members, { member: { address: "198.18.112.20", protocol_port: 80, subnet_id: NOWHERE } }, web)),
    ).toEqual(refused);
    expect(
      pick(await t.call("PUT", members, { members: [{ address: "198.18.112.21", protocol_port: 80, subnet_id: NOWHERE }] }, web)),
    ).toEqual(refused);
    // Nothing was written: no member, and the load balancer is not locked.
    expect((await t.call("GET", members, undefined, web)).body.members).toEqual([]);
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${lbId}`, undefined, web)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
    // A member on another subnet of the VIP's VPC is accepted.
    const ok = await t.call(
      "POST",
      members,
      { member: { address: "198.18.112.22", protocol_port: 80, subnet_id: uuid(aws.subnet!) } },
      web,
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);

    const before = (await t.call("GET", "/v2/lbaas/loadbalancers", undefined, web)).body.loadbalancers.length;
    const full = await t.call(
      "POST",
      "/v2/lbaas/loadbalancers",
      {
        loadbalancer: {
          vip_subnet_id: uuid(aws.subnet!),
          pools: [
            {
              protocol: "HTTP",
              lb_algorithm: "ROUND_ROBIN",
              members: [{ address: "198.18.112.23", protocol_port: 80, subnet_id: NOWHERE }],
            },
          ],
        },
      },
      web,
    );
    expect(pick(full)).toEqual(refused);
    expect((await t.call("GET", "/v2/lbaas/loadbalancers", undefined, web)).body.loadbalancers.length).toBe(before);
  });
});

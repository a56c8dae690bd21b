// The drivers the API Lambda calls, apart from createDrivers (drivers.ts): the API imports this file
// alone (@ottava/amphora/api-drivers), so its bundle holds neither the REST amphora driver nor the
// AWS drivers' dynamic import (esbuild makes a chunk of every import() in the files it bundles, called or not).
import type { CloudIdStore, Config, Drivers, Logger, NetworkDriver, ProfileValidator } from "@ottava/core";
import type { NeutronLookups } from "@ottava/aws/network";
import { noopDrivers } from "./noop";
import { createCertManager } from "./certs/local";

/**
 * The drivers the API Lambda calls: the network driver (VIPs) and the certificate manager (listeners'
 * TLS references). It never calls a compute or amphora driver, so its bundle leaves out the REST
 * amphora driver and its configuration renderers. On AWS there is no local data plane: the network
 * driver is the no-op one or the vpc one (`cloudIds`: where the UUIDs of its AWS ids are kept);
 * OTTAVA_NETWORK_DRIVER=local fails here as in createDrivers.
 */
export function createApiDrivers(config: Config, cloudIds?: CloudIdStore, log?: Logger): Pick<Drivers, "network" | "certificates"> {
  if (config.networkDriver === "local") throw new Error("OTTAVA_NETWORK_DRIVER=local runs only under npm start (--dataplane haproxy)");
  const network = config.networkDriver === "vpc" ? vpcNetwork(config, cloudIds, log) : noopDrivers().network;
  return { network, certificates: createCertManager(config) };
}

/**
 * The vpc network driver (@ottava/aws/network), loaded on its first call: a chunk of its own over edge's
 * minimal EC2 Query client, which only a process whose settings pick vpc loads (the API and the task
 * functions alike).
 */
export function vpcNetwork(config: Config, cloudIds: CloudIdStore | undefined, log?: Logger): NetworkDriver {
  if (!cloudIds) throw new Error("OTTAVA_NETWORK_DRIVER=vpc needs the table's cloud ids (createStores(...).cloudIds)");
  let driver: Promise<Required<Omit<NetworkDriver, "limits">>> | undefined;
  const load = () => (driver ??= import("@ottava/aws/network").then((m) => m.vpcNetworkDriver(config, cloudIds, log)));
  return {
    limits: { rulesPerSecurityGroup: config.vpcRulesPerSecurityGroup, securityGroupsPerInterface: config.vpcSecurityGroupsPerInterface },
    allocateVip: async (req) => (await load()).allocateVip(req),
    deallocateVip: async (lb) => (await load()).deallocateVip(lb),
    getSecurityGroup: async (sgId, projectId) => (await load()).getSecurityGroup(sgId, projectId),
    updateVipSecurityGroups: async (lb) => (await load()).updateVipSecurityGroups(lb),
    updateVip: async (tree) => (await load()).updateVip(tree),
    plugVip: async (lb, amphora, holdVip) => (await load()).plugVip(lb, amphora, holdVip),
    unplugVip: async (lb, amphora) => (await load()).unplugVip(lb, amphora),
    getNetworkConfigs: async (lb, amphora) => (await load()).getNetworkConfigs(lb, amphora),
    takeVip: async (lb, amphora) => (await load()).takeVip(lb, amphora),
    vipZone: async (lb) => (await load()).vipZone(lb),
    subnetsRouted: true,
    getSubnet: async (subnetId) => (await load()).getSubnet(subnetId),
    getPluggedNetworks: async (lb, amphora) => (await load()).getPluggedNetworks(lb, amphora),
    plugNetwork: async (lb, amphora, networkId, subnetIds, vnicType) =>
      (await load()).plugNetwork(lb, amphora, networkId, subnetIds, vnicType),
    plugFixedIp: async (lb, amphora, port, subnetId) => (await load()).plugFixedIp(lb, amphora, port, subnetId),
    unplugFixedIp: async (lb, amphora, port, subnetId) => (await load()).unplugFixedIp(lb, amphora, port, subnetId),
    unplugNetwork: async (amphora, port) => (await load()).unplugNetwork(amphora, port),
    checkMemberSubnets: async (lb, subnetIds) => (await load()).checkMemberSubnets(lb, subnetIds),
  };
}

/**
 * The checks of flavor and availability zone profiles against the cloud, for the compute driver the
 * settings pick: with ec2, @ottava/aws's (a chunk loaded at the first check, holding the minimal EC2
 * Query client, not the SDK's EC2 client); with noop or local, none (nothing is checked, as Octavia's
 * no-op drivers check nothing). With OTTAVA_NETWORK_DRIVER=vpc, `cloudIds` names the VPCs of valid_vip_networks.
 */
export function createProfileValidator(config: Config, cloudIds?: CloudIdStore): ProfileValidator | undefined {
  if (config.computeDriver !== "ec2") return undefined;
  let loaded: Promise<ProfileValidator> | undefined;
  const load = () => (loaded ??= import("@ottava/aws/profiles").then((m) => m.ec2ProfileValidator(config, cloudIds)));
  return {
    validateFlavor: async (data) => (await load()).validateFlavor(data),
    validateAvailabilityZone: async (data) => (await load()).validateAvailabilityZone(data),
  };
}

export type { NeutronKind, NeutronLookups, NeutronObject, LookupCaller } from "@ottava/aws/network";

/**
 * The Neutron look-ups answered from the VPC (OTTAVA_NETWORK_DRIVER=vpc, the API's /network): @ottava/aws's,
 * in a chunk loaded at the first look-up.
 */
export function loadNeutronLookups(config: Config, cloudIds: CloudIdStore): () => Promise<NeutronLookups> {
  let loaded: Promise<NeutronLookups> | undefined;
  return () => (loaded ??= import("@ottava/aws/network").then((m) => m.neutronLookups(config, cloudIds)));
}

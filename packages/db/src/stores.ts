// The DynamoDB adapters of the persistence ports, as a process builds them from its configuration:
// a client, then each store once, on the table the configuration names.
import type { Config } from "@ottava/core";
import { createClients, type ClientDecorator } from "./client";
import { DynamoCatalog } from "./catalog";
import { DynamoChangeSets } from "./changesets";
import { DynamoCloudIdStore } from "./cloud-ids";
import { DynamoFlowTrail } from "./flow-trail";
import { DynamoHealthManagerConfig } from "./healthmanager-config";
import { DynamoHousekeepingStore } from "./housekeeping";
import { DynamoStore } from "./store";

export interface Stores {
  /** The load-balancer trees, their locks and amphorae. */
  store: DynamoStore;
  trail: DynamoFlowTrail;
  changeSets: DynamoChangeSets;
  healthManagerConfig: DynamoHealthManagerConfig;
  catalog: DynamoCatalog;
  /** The UUIDs of cloud resources (the vpc network driver's). */
  cloudIds: DynamoCloudIdStore;
}

/** The stores, on one client (`decorate`d: tests and benchmarks add their meter or faults). */
export function createStores(config: Config, decorate?: ClientDecorator): Stores {
  const { doc } = createClients(config.dynamodbEndpoint, decorate);
  const opts = { tableName: config.tableName, expiryAge: config.loadBalancerExpiryAge };
  return {
    store: new DynamoStore(doc, opts),
    trail: new DynamoFlowTrail(doc, opts),
    changeSets: new DynamoChangeSets(doc, opts),
    healthManagerConfig: new DynamoHealthManagerConfig(doc, opts),
    catalog: new DynamoCatalog(doc, config.tableName),
    cloudIds: new DynamoCloudIdStore(doc, config.tableName),
  };
}

/** The amphora certificates' and purge's store (the task context's amphoraCerts, the housekeeping jobs'), on its own client. */
export function createHousekeepingStore(config: Config, decorate?: ClientDecorator): DynamoHousekeepingStore {
  return new DynamoHousekeepingStore(createClients(config.dynamodbEndpoint, decorate).doc, config.tableName);
}

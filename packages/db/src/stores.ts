// The DynamoDB adapters of the persistence ports, as a process builds them from its configuration:
// a client, then each store once, on the table the configuration names.
import type { Config } from "@ottava/core";
import { createClients } from "./client";
import { DynamoFaults } from "./faults";
import { DynamoCatalog } from "./catalog";
import { DynamoChangeSets } from "./changesets";
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
  /** The injected faults their clients share (OTTAVA_DYNAMODB_FAULTS), with what went through; undefined when none are set. */
  dynamoFaults: DynamoFaults | undefined;
}

export function createStores(config: Config): Stores {
  const dynamoFaults = config.dynamodbFaults ? new DynamoFaults(config.dynamodbFaults) : undefined;
  const { doc } = createClients(config.dynamodbEndpoint, { faults: dynamoFaults });
  const opts = { tableName: config.tableName, expiryAge: config.loadBalancerExpiryAge };
  return {
    store: new DynamoStore(doc, opts),
    trail: new DynamoFlowTrail(doc, opts),
    changeSets: new DynamoChangeSets(doc, opts),
    healthManagerConfig: new DynamoHealthManagerConfig(doc, opts),
    catalog: new DynamoCatalog(doc, config.tableName),
    dynamoFaults,
  };
}

/** The amphora certificates' and purge's store (the task context's amphoraCerts, the housekeeping jobs'), on its own client. */
export function createHousekeepingStore(config: Config): DynamoHousekeepingStore {
  return new DynamoHousekeepingStore(createClients(config.dynamodbEndpoint).doc, config.tableName);
}

// The DynamoDB adapters of the persistence ports, as a process builds them: once each, on the table
// its configuration names.
import type { Config } from "@ottava/core";
import { createClients } from "./client";
import { createCatalog, type DynamoCatalog } from "./catalog";
import { DynamoChangeSets } from "./changesets";
import { DynamoFlowTrail } from "./flow-trail";
import { DynamoHealthManagerConfig } from "./healthmanager-config";
import { DynamoStore } from "./store";

export interface Stores {
  /** The load-balancer trees, their locks and amphorae. */
  store: DynamoStore;
  trail: DynamoFlowTrail;
  changeSets: DynamoChangeSets;
  healthManagerConfig: DynamoHealthManagerConfig;
  catalog: DynamoCatalog;
}

export function createStores(config: Config): Stores {
  const { doc } = createClients(config.dynamodbEndpoint);
  const opts = { tableName: config.tableName, expiryAge: config.loadBalancerExpiryAge };
  return {
    store: new DynamoStore(doc, opts),
    trail: new DynamoFlowTrail(doc, opts),
    changeSets: new DynamoChangeSets(doc, opts),
    healthManagerConfig: new DynamoHealthManagerConfig(doc, opts),
    catalog: createCatalog(config),
  };
}

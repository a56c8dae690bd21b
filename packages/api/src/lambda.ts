// The API's Lambda entry. Its settings are made on the first request (configLoader): under keystone
// that reads the service user's password from its SSM parameter (OTTAVA_KEYSTONE_PASSWORD_PARAMETER),
// once per cold start; under noauth nothing is read and the SSM reader's modules are never loaded.
import { handle } from "hono/aws-lambda";
import { configLoader } from "@ottava/core";
import { ssmSecretReader } from "@ottava/edge";
import { createApp } from "./app";
import { createDeps } from "./wiring";

type Handler = ReturnType<typeof handle>;

const config = configLoader(process.env, ssmSecretReader());
let app: Handler | undefined;

export const handler: Handler = async (event, context) => {
  app ??= handle(await createApp(createDeps(await config())));
  return app(event, context);
};

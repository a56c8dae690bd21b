import { handle } from "hono/aws-lambda";
import { createApp } from "./app";
import { createDeps } from "./wiring";

export const handler = handle(await createApp(createDeps()));

// The workload a signed AWS call is made for, in its User-Agent (workload.ts): what CloudTrail shows an
// operator, and what the test-bed runs attribute each recorded call by (@ottava/aws/testing aws-calls.ts).
import { createServer } from "node:http";
import { expect, it } from "vitest";
import { asWorkload, awsJsonClient } from "@ottava/edge";

it("names the workload of the asynchronous context in each signed call's User-Agent, and only Ottava outside any", async () => {
  const agents: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    agents.push(req.headers["user-agent"]);
    req.resume().on("end", () => res.writeHead(200, { "content-type": "application/x-amz-json-1.1" }).end("{}"));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  try {
    const call = awsJsonClient(
      { signingName: "secretsmanager", targetPrefix: "secretsmanager", jsonVersion: "1.1" },
      {
        endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
        region: "us-east-1",
        credentials: async () => ({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" }),
      },
    );
    // One client, two workloads at once (as npm start's one process runs the API and the tasks).
    await Promise.all([
      asWorkload("computeCreate", async () => {
        await new Promise((ok) => setTimeout(ok, 5));
        await call("ListSecrets", {}, "list");
      }),
      asWorkload("api", () => call("ListSecrets", {}, "list")),
    ]);
    await call("ListSecrets", {}, "list");
    expect(agents).toEqual(["ottava/api", "ottava/computeCreate", "ottava"]);
  } finally {
    await new Promise((ok) => server.close(ok));
  }
});

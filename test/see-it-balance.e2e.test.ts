// The README's "See it balance traffic", as a newcomer runs it: `npm start -- --dataplane haproxy
// --cli-standin PORT`, then `npm run see-it-balance`, which makes a load balancer with the real
// `openstack` CLI in front of two web servers and curls its VIP. The answers alternate between them.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "@ottava/amphora";
import { startStack, type Stack } from "./support/stack";

const run = promisify(execFile);
let stack: Stack;
let standIn: number;

beforeAll(async () => {
  standIn = await freePort();
  stack = await startStack(["--in-memory", "--dataplane", "haproxy", "--cli-standin", String(standIn)], {
    OTTAVA_LOCAL_VIP_RANGE: "127.0.109.0/24",
  });
});

afterAll(async () => {
  await stack?.stop();
});

it("npm run see-it-balance: the openstack CLI makes the load balancer, and curl reaches both members in turn", async () => {
  const [m1, m2, listener] = [await freePort(), await freePort(), await freePort()];
  const { stdout, stderr } = await run("npm", ["run", "--silent", "see-it-balance"], {
    env: {
      ...process.env,
      OTTAVA_BIND_PORT: new URL(stack.url).port,
      OTTAVA_CLI_STANDIN_PORT: String(standIn),
      SEE_IT_MEMBER_PORTS: `${m1} ${m2}`,
      SEE_IT_LISTENER_PORT: String(listener),
    },
    timeout: 150_000,
  });
  const answers = stdout.trim().split("\n");
  const one = `member 1 (127.0.0.1:${m1})`;
  const two = `member 2 (127.0.0.1:${m2})`;
  expect(answers).toHaveLength(4);
  expect(new Set(answers)).toEqual(new Set([one, two]));
  expect([answers[0], answers[1]]).toEqual([answers[2], answers[3]]);
  expect(stderr).toContain("+ openstack loadbalancer create --name see-it-balance");
  expect(stderr).toContain(`+ openstack loadbalancer member create --address 127.0.0.1 --protocol-port ${m2} --wait see-it-balance`);

  const lbs = (await stack.call("GET", "/v2/lbaas/loadbalancers?name=see-it-balance", undefined, { "x-project-id": "demo" })).body;
  expect(lbs.loadbalancers).toHaveLength(1);
  expect(lbs.loadbalancers[0]).toMatchObject({ provisioning_status: "ACTIVE", vip_address: expect.stringMatching(/^127\.0\.109\./) });
}, 180_000);

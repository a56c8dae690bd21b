// Pushes a new health-manager configuration to every amphora: a loop over pages of the amphora list
// (a Task, then a Choice back to it while there are more), so the state carries only the generation
// and a marker (`$.page`: the last page's answer) whatever the number of amphorae. No lock is taken (the input has no `owner`).
import type { FlowSpec } from "./builder";

export const healthManagerRefresh: FlowSpec = {
  comment: "Ottava: push the health-manager addresses to every amphora agent",
  steps: [{ name: "RefreshAgentConfigPage", task: "refreshAgentConfigPage", resultPath: "$.page", loopWhile: "$.page.more" }],
  onFailure: "logHealthManagerRefreshFailure",
  timeoutSeconds: 86400,
};

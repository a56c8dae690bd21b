// What StepFunctionsEngine takes from the SDK, loaded by it on first use (import("./sfn-client")):
// importing these names, not the SDK package's namespace, keeps the rest of client-sfn out of the bundle.
export { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";

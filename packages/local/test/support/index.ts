// What other packages' tests share from local (@ottava/local/testing): the real app in process, and db's fixtures to start from.
export * from "./app";
export * from "@ottava/db/testing";

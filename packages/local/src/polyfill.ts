// aws-local-stepfunctions needs Promise.withResolvers, which Node 20 lacks (without it every Task
// throws a TypeError that a Catch turns into an ordinary-looking failure). Import before it.
const P = Promise as unknown as { withResolvers?: () => unknown };
if (typeof P.withResolvers !== "function") {
  P.withResolvers = function withResolvers<T>() {
    let resolve!: (v: T | PromiseLike<T>) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
}
export {};

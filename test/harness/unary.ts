import type { ServiceError } from "@grpc/grpc-js";

/**
 * Calls a grpc-js unary method (`client.describe`, `client.list`, ...) and resolves with its
 * answer; rejects with the ServiceError (its `code` and `details`) when the call fails.
 */
export function unary<Req, Res>(
  method: (request: Req, callback: (err: ServiceError | null, response: Res) => void) => unknown,
  request: Req,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    method(request, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

/** The ServiceError a failing call rejected with; throws if it did not fail. */
export async function failureOf(call: Promise<unknown>): Promise<ServiceError> {
  try {
    await call;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error("the call did not fail");
}

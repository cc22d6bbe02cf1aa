import { fileURLToPath } from "node:url";
import type { Server } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protoPath as healthProtoPath } from "grpc-health-check";

const PROTO_DIR = fileURLToPath(new URL("../proto", import.meta.url));

/**
 * Adds gRPC server reflection (grpc.reflection.v1 and v1alpha) describing turnstile.v1 and
 * grpc.health.v1, so `grpcurl -plaintext HOST:PORT list` and `describe` work without the protos.
 */
export function addReflection(server: Server): void {
  const definition = loadSync(["turnstile/v1/turnstile.proto", healthProtoPath], {
    includeDirs: [PROTO_DIR],
  });
  new ReflectionService(definition).addToServer(server);
}

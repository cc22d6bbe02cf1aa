import { readFileSync } from "node:fs";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Server } from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";

// Written by `npm run generate` (buf build): complete descriptor sets, imports included.
const DESCRIPTOR_SETS = ["turnstile.binpb", "health.binpb"].map(
  (file) => new URL(`../../../gen/reflection/${file}`, import.meta.url),
);

/**
 * Adds gRPC server reflection (grpc.reflection.v1 and v1alpha) describing turnstile.v1 and
 * grpc.health.v1 with their files as protoc builds them (google/protobuf/duration.proto included),
 * so stock `grpcurl -plaintext HOST:PORT list`, `describe` and calls work without the protos.
 */
export function addReflection(server: Server): void {
  const fileDescriptorProtos = DESCRIPTOR_SETS.flatMap((url) => filesOf(readFileSync(url)));
  // @grpc/reflection reads only `fileDescriptorProtos` from each entry of a package definition.
  const definition = { descriptors: { fileDescriptorProtos } } as unknown as PackageDefinition;
  new ReflectionService(definition).addToServer(server);
}

/** The encoded FileDescriptorProtos of a FileDescriptorSet (field 1, repeated). */
function filesOf(set: Uint8Array): Uint8Array[] {
  const reader = new BinaryReader(set);
  const files: Uint8Array[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) files.push(reader.bytes());
    else reader.skip(wireType);
  }
  return files;
}

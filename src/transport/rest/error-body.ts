/**
 * The REST error body (docs/errors.md#the-api, google.rpc.Status in JSON as grpc-gateway writes it):
 * `{"code": <gRPC code number>, "message": "...", "details": [{"@type": "type.googleapis.com/...", ...}]}`.
 */
import { create, toJson, type JsonObject, type Registry } from '@bufbuild/protobuf';
import { anyPack, AnySchema } from '@bufbuild/protobuf/wkt';
import type { ConnectError } from '@connectrpc/connect';

export interface RestErrorBody {
  code: number;
  message: string;
  details: JsonObject[];
}

/** `registry` resolves the detail types received from the Connect handler (zitadel.v1.ErrorDetail). */
export function restErrorBody(error: ConnectError, registry: Registry): RestErrorBody {
  const details: JsonObject[] = [];
  for (const detail of error.details) {
    const any =
      'desc' in detail
        ? anyPack(detail.desc, create(detail.desc, detail.value))
        : create(AnySchema, { typeUrl: `type.googleapis.com/${detail.type}`, value: detail.value });
    try {
      details.push(toJson(AnySchema, any, { registry }) as JsonObject);
    } catch {
      // A detail of a type we do not know cannot be shown in JSON; it is left out.
    }
  }
  return { code: error.code, message: error.rawMessage, details };
}

/**
 * What a client sees when connect-es or protobuf-es refuse its input before any interceptor runs
 * (JSON and binary decoding, size limits, decompression, envelopes, protocol headers): one table from
 * the library's code and wording to a code and a fixed message of ours (docs/errors.md#the-api). The
 * library's messages quote the client's bytes, name options (readMaxBytes) and sometimes use
 * Internal for what is the client's fault; none of that reaches a client.
 *
 * Rules are tried in order; the first whose `from` codes and `pattern` match wins. A message no rule
 * matches is left as it is (our own errors, and anything unexpected, which is already a static
 * Internal). The patterns are pinned to the libraries' wording by test/api/input-errors.test.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DescMessage, JsonReadOptions, JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { describeInvalidField, findInvalidField } from './json-fields.ts';
import { notValidJson } from './json-syntax.ts';

export interface InputErrorRule {
  /** The library's codes this rule applies to. */
  from: readonly Code[];
  /** Anchored pattern over the library's raw message. */
  pattern: RegExp;
  /** Only when the message's `type` group is the method's input message (not a nested one). */
  inputOnly?: boolean;
  code: Code;
  /** Fixed, or built from groups the pattern restricts to digits. */
  message: string | ((groups: Record<string, string>) => string);
  /**
   * A refusal of the JSON text itself or of a field's value: when the call's JSON text is known
   * (a Connect call, `JsonInputCall`), the answer names the line and column, or the field's path and
   * what it takes, instead of the fixed message.
   */
  json?: true;
}

// JSON values as protobuf-es formats them in "cannot decode message X from JSON: <value>".
const FORMATTED_VALUE = String.raw`(?:null|object|string|true|false|Array\(\d+\)|-?Infinity|-?[\d.]+(?:e[+-]?\d+)?|"[^]*")`;

export const INPUT_ERROR_RULES: readonly InputErrorRule[] = [
  {
    from: [Code.Internal],
    pattern: /^parse binary: /,
    code: Code.InvalidArgument,
    message: 'request message is not valid protobuf binary',
  },
  {
    from: [Code.InvalidArgument],
    pattern: /^cannot decode (?:message [\w.]+ from JSON: duplicate object key "|field [\w.]+ from JSON: set multiple times$)/,
    code: Code.InvalidArgument,
    message: 'request message sets a field more than once',
  },
  {
    from: [Code.InvalidArgument],
    pattern: /^cannot decode oneof [\w.]+ from JSON: /,
    code: Code.InvalidArgument,
    message: 'request message sets more than one field of a oneof',
  },
  {
    from: [Code.InvalidArgument],
    pattern: /^cannot decode (?:message )?[\w.]+ from JSON: maximum recursion depth of \d+ reached$/,
    code: Code.InvalidArgument,
    message: 'request message is nested too deeply',
  },
  {
    from: [Code.InvalidArgument],
    pattern: new RegExp(String.raw`^cannot decode message (?<type>[\w.]+) from JSON: ${FORMATTED_VALUE}$`),
    inputOnly: true,
    code: Code.InvalidArgument,
    message: 'request message must be a JSON object',
  },
  {
    // What remains for the input message itself is JSON.parse's complaint about the syntax.
    from: [Code.InvalidArgument],
    pattern: /^cannot decode message (?<type>[\w.]+) from JSON: /,
    inputOnly: true,
    code: Code.InvalidArgument,
    message: 'request message is not valid JSON',
    json: true,
  },
  {
    // A field's value: wrong JSON type, out of range, unknown enum name, invalid well-known type.
    from: [Code.InvalidArgument],
    pattern: /^cannot decode /,
    code: Code.InvalidArgument,
    message: 'request message has a field with an invalid value',
    json: true,
  },
  {
    // ResourceExhausted stays (Connect 429, gRPC 8, as grpc-go answers an oversized message).
    from: [Code.ResourceExhausted],
    pattern: /^message (?:size (?:\d+ )?)?is larger than configured readMaxBytes (?<limit>\d+)(?: after decompression)?$/,
    code: Code.ResourceExhausted,
    message: (groups) => `request message is larger than ${groups['limit']} bytes`,
  },
  {
    // connect-node answers Internal unless it recognizes the zlib error code, which it cannot
    // inside Jest's VM realm; a body that does not decompress is the client's fault either way.
    from: [Code.Internal, Code.InvalidArgument],
    pattern: /^decompression failed$/,
    code: Code.InvalidArgument,
    message: 'request message could not be decompressed',
  },
  {
    // grpc-go answers Internal here as well; bad input never gets a server error code (docs/errors.md).
    from: [Code.Internal],
    pattern: /^received compressed envelope, but do not know how to decompress$/,
    code: Code.InvalidArgument,
    message: 'request message is flagged compressed, but the request names no encoding',
  },
  {
    from: [Code.InvalidArgument],
    pattern: /^protocol error: (?:incomplete envelope|promised \d+ bytes, received \d+)$/,
    code: Code.InvalidArgument,
    message: 'request body ends inside a message',
  },
  {
    from: [Code.InvalidArgument],
    pattern: /^protocol error: invalid (?:grpc|connect) timeout value: /,
    code: Code.InvalidArgument,
    message: 'request timeout is not valid',
  },
  {
    from: [Code.Unimplemented],
    pattern: /^unknown compression "[^]*": supported encodings are /,
    code: Code.Unimplemented,
    message: 'request compression is not supported',
  },
];

export interface PublicInputError {
  code: Code;
  message: string;
}

/**
 * Our code and message for a library's input error, or undefined when no rule matches.
 * `inputType` is the type name of the method's input message; `call`, when known, the JSON text the
 * call sent, which a JSON rule describes precisely.
 */
export function publicInputError(code: Code, message: string, inputType: string, call?: JsonInputCall): PublicInputError | undefined {
  for (const rule of INPUT_ERROR_RULES) {
    if (!rule.from.includes(code)) continue;
    const match = rule.pattern.exec(message);
    if (match === null) continue;
    const groups = match.groups ?? {};
    if (rule.inputOnly === true && groups['type'] !== inputType) continue;
    const precise = rule.json === true && call !== undefined ? describeJsonText(call) : undefined;
    return { code: rule.code, message: precise ?? (typeof rule.message === 'string' ? rule.message : rule.message(groups)) };
  }
  return undefined;
}

/**
 * One Connect call whose JSON input is read: the method's input message, and the text once the
 * router decoded it (through `jsonInputOptions.textDecoder`). The call runs inside
 * `jsonInputCalls.run(call, …)` (parse-errors.ts), so that the decoder, which the router shares
 * between all methods, knows which message it reads.
 */
export interface JsonInputCall {
  schema: DescMessage;
  text?: string;
}

export const jsonInputCalls = new AsyncLocalStorage<JsonInputCall>();

/** Where the call's JSON text goes wrong: its line and column, or a field's path and what it takes; undefined when not found. */
function describeJsonText({ schema, text }: JsonInputCall): string | undefined {
  if (text === undefined) return undefined;
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch {
    return notValidJson(text);
  }
  const found = findInvalidField(schema, json);
  return found === undefined ? undefined : describeInvalidField(found);
}

const enumReach = new WeakMap<DescMessage, boolean>();

/** Whether a message of this type can hold an enum value, at any depth (well-known types aside); computed once per type. */
function reachesEnum(desc: DescMessage): boolean {
  let reaches = enumReach.get(desc);
  if (reaches === undefined) {
    reaches = holdsEnum(desc, new Set());
    enumReach.set(desc, reaches);
  }
  return reaches;
}

function holdsEnum(desc: DescMessage, seen: Set<DescMessage>): boolean {
  if (seen.has(desc) || desc.typeName.startsWith('google.protobuf.')) return false;
  seen.add(desc);
  return desc.fields.some((f) => {
    if (f.fieldKind === 'enum' || (f.fieldKind === 'list' && f.listKind === 'enum') || (f.fieldKind === 'map' && f.mapKind === 'enum')) return true;
    const nested = f.fieldKind === 'message' || (f.fieldKind === 'list' && f.listKind === 'message') || (f.fieldKind === 'map' && f.mapKind === 'message') ? f.message : undefined;
    return nested !== undefined && holdsEnum(nested, seen);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The router's JSON read options.
 *
 * Unknown fields are ignored, as connect-go and ZITADEL's gateway do (protojson `DiscardUnknown`):
 * a client built against newer ZITADEL protos must keep working (docs/decisions.md#json-input). This
 * replaces the earlier choice of InvalidArgument, which guarded against a misspelt feature flag
 * looking set; the answer of SetInstanceFeatures and GetInstanceFeatures shows what is set. Like
 * protojson's option, protobuf-es's also ignores unknown enum names, which would drop a misspelt
 * `"CODE"` from a list without a word: so the decoder below checks the enum values of a message
 * that has any before protobuf-es reads it, and refuses an unknown name with the field's path and
 * the names it takes. The REST transcoder drops unknown keys itself and refuses those too (request.ts).
 *
 * A JSON request message must be UTF-8 (RFC 8259 §8.1): connect-es decodes it with a lenient
 * TextDecoder by default (invalid bytes become U+FFFD, which protobuf-es's messages then quote). Its
 * JSON serialization takes a `textDecoder`, which the router passes on although its type omits it.
 */
export const jsonInputOptions: Partial<JsonReadOptions> & { textDecoder: { decode(input?: Uint8Array): string } } = {
  ignoreUnknownFields: true,
  textDecoder: {
    decode(input) {
      let text: string;
      try {
        text = utf8.decode(input);
      } catch {
        throw new ConnectError('request body is not valid UTF-8', Code.InvalidArgument);
      }
      const call = jsonInputCalls.getStore();
      if (call !== undefined && call.text === undefined) {
        call.text = text;
        if (reachesEnum(call.schema)) refuseInvalidField(call.schema, text);
      }
      return text;
    },
  },
};

/** Refuses a parsed JSON message with a field protobuf-es would refuse or (for enum names) silently drop. */
function refuseInvalidField(schema: DescMessage, text: string): void {
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch {
    return; // protobuf-es refuses it next, and the answer names the line and column
  }
  const found = findInvalidField(schema, json);
  if (found !== undefined) throw new ConnectError(describeInvalidField(found), Code.InvalidArgument);
}

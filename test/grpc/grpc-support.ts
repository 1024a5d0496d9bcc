/**
 * The gRPC ecosystem's own client (@grpc/grpc-js with @grpc/proto-loader) against a real Gatehouse:
 * clients built from .proto files, unary calls as promises, a token for the API, and the decoding
 * of grpc-status-details-bin (a google.rpc.Status) read by hand, independent of connect-es.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { ErrorDetailSchema, type ErrorDetail } from '../../gen/zitadel/message_pb.js';
import { SECRETS } from '../support/fixtures.ts';
import { basic } from '../support/http.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const LOADER_OPTIONS: protoLoader.Options = { includeDirs: [path.join(ROOT, 'proto')], longs: String, enums: String, defaults: true, oneofs: true };
export const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';

/** The client constructor of `service` (full name) from a package definition. */
export function serviceFrom(definition: protoLoader.PackageDefinition, service: string): grpc.ServiceClientConstructor {
  let node: unknown = grpc.loadPackageDefinition(definition);
  for (const part of service.split('.')) {
    node = (node as Record<string, unknown> | undefined)?.[part];
  }
  if (typeof node !== 'function') throw new Error(`no ${service} in the definition`);
  return node as grpc.ServiceClientConstructor;
}

/** A client of `service` from one of the project's own .proto files (relative to proto/). */
export function protoClient(file: string, service: string, address: string, credentials: grpc.ChannelCredentials): grpc.Client {
  const Client = serviceFrom(protoLoader.loadSync(file, LOADER_OPTIONS), service);
  return new Client(address, credentials);
}

export interface Reply<T> {
  value?: T;
  error?: grpc.ServiceError;
}

/** A unary call by method name, answered with the value or the error (never rejects). */
export function unary<T>(client: grpc.Client, method: string, request: object, metadata = new grpc.Metadata()): Promise<Reply<T>> {
  const call = (client as unknown as Record<string, (req: object, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, v?: T) => void) => void>)[method];
  if (call === undefined) throw new Error(`no method ${method}`);
  return new Promise((resolve) => {
    call.call(client, request, metadata, (error, value) => resolve(error === null ? { value } : { error }));
  });
}

/** A unary call of any path, with empty messages both ways: for procedures no .proto describes. */
export function rawUnary(client: grpc.Client, path: string, metadata = new grpc.Metadata()): Promise<Reply<Buffer>> {
  const identity = (b: Buffer): Buffer => b;
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, identity, identity, Buffer.alloc(0), metadata, (error, value) => resolve(error === null ? { value } : { error }));
  });
}

export function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** An API token for the machine user `reporter` (client_credentials), over http or https. */
export async function reporterToken(base: string, ca?: string): Promise<string> {
  const body = `grant_type=client_credentials&scope=${encodeURIComponent(API_SCOPE)}`;
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('reporter', SECRETS.reporter) };
  if (ca === undefined) {
    const reply = await fetch(`${base}/oauth/v2/token`, { method: 'POST', headers, body });
    return ((await reply.json()) as { access_token: string }).access_token;
  }
  const text = await new Promise<string>((resolve, reject) => {
    const req = https.request(`${base}/oauth/v2/token`, { method: 'POST', ca, headers }, (res) => {
      let data = '';
      res.on('data', (chunk: Buffer) => (data += chunk.toString()));
      res.on('end', () => resolve(data));
    });
    req.on('error', reject);
    req.end(body);
  });
  return (JSON.parse(text) as { access_token: string }).access_token;
}

export interface RpcStatus {
  code: number;
  message: string;
  details: { typeUrl: string; value: Uint8Array }[];
}

/** google.rpc.Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; } */
export function decodeStatus(bytes: Uint8Array): RpcStatus {
  const status: RpcStatus = { code: 0, message: '', details: [] };
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1) status.code = reader.int32();
    else if (field === 2) status.message = reader.string();
    else if (field === 3) status.details.push(decodeAny(reader.bytes()));
    else reader.skip(wireType);
  }
  return status;
}

function decodeAny(bytes: Uint8Array): { typeUrl: string; value: Uint8Array } {
  const any: { typeUrl: string; value: Uint8Array } = { typeUrl: '', value: new Uint8Array() };
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1) any.typeUrl = reader.string();
    else if (field === 2) any.value = reader.bytes();
    else reader.skip(wireType);
  }
  return any;
}

/** The zitadel.v1.ErrorDetail in an error's grpc-status-details-bin, with the Status around it. */
export function errorDetail(error: grpc.ServiceError): { status: RpcStatus; detail: ErrorDetail | undefined } {
  const raw = error.metadata.get('grpc-status-details-bin')[0];
  if (!(raw instanceof Buffer)) throw new Error('no grpc-status-details-bin');
  const status = decodeStatus(raw);
  const any = status.details.find((d) => d.typeUrl === 'type.googleapis.com/zitadel.v1.ErrorDetail');
  return { status, detail: any === undefined ? undefined : fromBinary(ErrorDetailSchema, any.value) };
}

/** A self-signed certificate for 127.0.0.1 in a temp dir: { dir, cert (PEM), certFile, keyFile }. */
export function selfSigned(): { dir: string; cert: string; certFile: string; keyFile: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-grpc-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { dir, cert: fs.readFileSync(certFile, 'utf8'), certFile, keyFile };
}

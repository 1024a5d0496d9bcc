/**
 * gRPC server reflection (docs/endpoints.md#server-reflection) with a grpc-js client of the
 * reflection protos, a client built from the reflected descriptors alone,
 * `buf curl --list-services`, and the switch GATEHOUSE_GRPC_REFLECTION=false.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { LOADER_OPTIONS, ROOT, bearer, protoClient, reporterToken, selfSigned, serviceFrom, unary } from './grpc-support.ts';

interface ReflectionResponse {
  messageResponse: 'fileDescriptorResponse' | 'listServicesResponse' | 'errorResponse' | 'allExtensionNumbersResponse';
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  listServicesResponse?: { service: { name: string }[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

/** One request on a fresh ServerReflectionInfo stream, answered with its one response or the error. */
function reflect(server: TestServer, version: 'v1' | 'v1alpha', request: object, credentials = grpc.credentials.createInsecure()): Promise<ReflectionResponse> {
  const client = protoClient(`grpc/reflection/${version}/reflection.proto`, `grpc.reflection.${version}.ServerReflection`, `127.0.0.1:${server.running.listener.port}`, credentials);
  const call = (client as unknown as { serverReflectionInfo(): grpc.ClientDuplexStream<object, ReflectionResponse> }).serverReflectionInfo();
  return new Promise<ReflectionResponse>((resolve, reject) => {
    call.once('data', (response: ReflectionResponse) => {
      resolve(response);
      call.end();
    });
    call.once('error', reject);
    call.write(request);
  }).finally(() => client.close());
}

const names = (files: Buffer[]): string[] => files.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name);

describe('gRPC server reflection', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fixture().document);
  });
  afterAll(() => server.stop());

  it.each(['v1', 'v1alpha'] as const)('%s lists every served service, without a token', async (version) => {
    const answer = await reflect(server, version, { listServices: '*' });
    expect(answer.listServicesResponse?.service.map((s) => s.name)).toEqual([
      'grpc.health.v1.Health',
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
      'zitadel.admin.v1.AdminService',
      'zitadel.app.v2beta.AppService',
      'zitadel.auth.v1.AuthService',
      'zitadel.authorization.v2beta.AuthorizationService',
      'zitadel.feature.v2.FeatureService',
      'zitadel.idp.v2.IdentityProviderService',
      'zitadel.management.v1.ManagementService',
      'zitadel.org.v2.OrganizationService',
      'zitadel.project.v2beta.ProjectService',
      'zitadel.settings.v2.SettingsService',
      'zitadel.user.v2.UserService',
      'zitadel.user.v3alpha.UserService',
    ]);
  });

  it('returns the file containing a symbol, first, with its dependencies', async () => {
    const answer = await reflect(server, 'v1', { fileContainingSymbol: 'zitadel.feature.v2.FeatureService.GetInstanceFeatures' });
    const files = names(answer.fileDescriptorResponse!.fileDescriptorProto);
    expect(files[0]).toBe('zitadel/feature/v2/feature_service.proto');
    expect(files).toEqual(expect.arrayContaining(['zitadel/feature/v2/feature.proto', 'google/api/annotations.proto', 'google/protobuf/timestamp.proto']));
    expect(new Set(files).size).toBe(files.length);
  });

  it('returns a file by name, and NOT_FOUND errors for unknown names', async () => {
    const byName = await reflect(server, 'v1alpha', { fileByFilename: 'zitadel/auth.proto' });
    expect(names(byName.fileDescriptorResponse!.fileDescriptorProto)[0]).toBe('zitadel/auth.proto');
    const missing = await reflect(server, 'v1', { fileContainingSymbol: 'nope.v1.Nope' });
    expect(missing.errorResponse).toEqual({ errorCode: grpc.status.NOT_FOUND, errorMessage: 'symbol not found: nope.v1.Nope' });
  });

  it('gives descriptors enough to build a working client without any .proto file', async () => {
    const answer = await reflect(server, 'v1', { fileContainingSymbol: 'zitadel.feature.v2.FeatureService' });
    const set = create(FileDescriptorSetSchema, { file: answer.fileDescriptorResponse!.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes)) });
    const definition = protoLoader.loadFileDescriptorSetFromBuffer(Buffer.from(toBinary(FileDescriptorSetSchema, set)), { ...LOADER_OPTIONS, includeDirs: [] });
    const Features = serviceFrom(definition, 'zitadel.feature.v2.FeatureService');
    const features = new Features(`127.0.0.1:${server.running.listener.port}`, grpc.credentials.createInsecure());
    try {
      const reply = await unary(features, 'GetInstanceFeatures', { inheritance: true }, bearer(await reporterToken(server.url)));
      expect(reply.error).toBeUndefined();
      // protobufjs keeps the descriptors' snake_case field names for types loaded from descriptors.
      expect(reply.value).toMatchObject({
        details: { resource_owner: expect.stringMatching(/^\d+$/) },
        oidc_token_exchange: { enabled: false, source: 'SOURCE_SYSTEM' },
      });
    } finally {
      features.close();
    }
  });

  it('answers buf curl --list-services over h2c', async () => {
    const { stdout } = await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/buf'), [
      'curl', '--list-services', '--protocol', 'grpc', '--http2-prior-knowledge', server.url,
    ]);
    expect(stdout.trim().split('\n')).toEqual(expect.arrayContaining(['zitadel.feature.v2.FeatureService', 'grpc.health.v1.Health']));
  });
});

describe('gRPC server reflection switched off (GATEHOUSE_GRPC_REFLECTION=false)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fixture().document, { GATEHOUSE_GRPC_REFLECTION: 'false' });
  });
  afterAll(() => server.stop());

  it.each(['v1', 'v1alpha'] as const)('answers %s with UNIMPLEMENTED', async (version) => {
    await expect(reflect(server, version, { listServices: '*' })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
  });

  it('keeps health, which no longer lists reflection', async () => {
    const client = protoClient('grpc/health/v1/health.proto', 'grpc.health.v1.Health', `127.0.0.1:${server.running.listener.port}`, grpc.credentials.createInsecure());
    try {
      expect(await unary(client, 'check', { service: '' })).toEqual({ value: { status: 'SERVING' } });
      expect((await unary(client, 'check', { service: 'grpc.reflection.v1.ServerReflection' })).error?.code).toBe(grpc.status.NOT_FOUND);
    } finally {
      client.close();
    }
  });
});

describe('gRPC server reflection over TLS', () => {
  let server: TestServer;
  let tls: ReturnType<typeof selfSigned>;
  beforeAll(async () => {
    tls = selfSigned();
    const port = await freePort();
    server = await startTestServer(fixture().document, {
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_EXTERNAL_URL: `https://127.0.0.1:${port}`,
      GATEHOUSE_TLS_CERT: tls.certFile,
      GATEHOUSE_TLS_KEY: tls.keyFile,
    });
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(tls.dir, { recursive: true, force: true });
  });

  it.each(['v1', 'v1alpha'] as const)('%s lists the services and returns files over TLS (ALPN h2)', async (version) => {
    const credentials = grpc.credentials.createSsl(Buffer.from(tls.cert));
    const listed = await reflect(server, version, { listServices: '*' }, credentials);
    expect(listed.listServicesResponse?.service.map((s) => s.name)).toContain('zitadel.feature.v2.FeatureService');
    const file = await reflect(server, version, { fileContainingSymbol: 'zitadel.auth.v1.AuthService' }, credentials);
    expect(names(file.fileDescriptorResponse?.fileDescriptorProto ?? [])[0]).toBe('zitadel/auth.proto');
  });
});

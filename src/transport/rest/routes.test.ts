/**
 * The route table tries a request only against the templates of its shape (first segment and number
 * of segments) and the open ones (a trailing `**`, or a variable as first segment), most specific
 * first: a path whose shape has no template of its own still finds an open one, and a path whose
 * shape has templates finds the open ones among them in the order of specificity.
 */
import { create, createFileRegistry, setExtension, type DescService, type MessageInitShape } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
  type MethodDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt';
import { http as httpOption } from '../../../gen/google/api/annotations_pb.js';
import { HttpRuleSchema } from '../../../gen/google/api/http_pb.js';
import { createRecordingRouter } from './invoke.ts';
import { RestRoutes, type RouteMatch } from './routes.ts';

const PACKAGE = 'gatehouse.routes.test';

type Verb = 'get' | 'put' | 'post' | 'delete' | 'patch';

function method(name: string, verb: Verb, path: string): MessageInitShape<typeof MethodDescriptorProtoSchema> {
  const options = create(MethodOptionsSchema);
  setExtension(options, httpOption, create(HttpRuleSchema, { pattern: { case: verb, value: path } }));
  return { name, inputType: `.${PACKAGE}.Request`, outputType: `.${PACKAGE}.Request`, options };
}

function shelfService(): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: 'routes_test.proto',
    package: PACKAGE,
    syntax: 'proto3',
    messageType: [
      {
        name: 'Request',
        field: [
          { name: 'thing_id', number: 1, type: Type.STRING, label: Label.OPTIONAL, jsonName: 'thingId' },
          { name: 'name', number: 2, type: Type.STRING, label: Label.OPTIONAL, jsonName: 'name' },
        ],
      },
    ],
    service: [
      {
        name: 'Shelves',
        method: [
          method('GetThing', 'get', '/v1/things/{thing_id}'),
          method('GetSpecialThing', 'get', '/v1/things/special'),
          method('GetFile', 'get', '/v1/{name=files/**}'),
          method('PutFile', 'put', '/v1/{name=files/**}'),
          method('GetFileInfo', 'get', '/v1/files/{thing_id}'),
          method('ListShelfThings', 'get', '/{name=shelves/*}/things'),
          method('ListShelfBooks', 'get', '/shelves/{thing_id}/books'),
        ],
      },
    ],
  });
  const service = createFileRegistry(file, () => undefined).getService(`${PACKAGE}.Shelves`);
  if (service === undefined) throw new Error('test service not built');
  return service;
}

/** The method a match found and its variables, or the match's kind. */
function found(match: RouteMatch): { method: string; variables: Record<string, string> } | RouteMatch['kind'] {
  if (match.kind !== 'found') return match.kind;
  return { method: match.route.method.name, variables: Object.fromEntries(match.variables) };
}

describe('the REST route table', () => {
  const { router, calls } = createRecordingRouter();
  router.service(shelfService(), {});
  const table = new RestRoutes(calls);

  it('orders every template by specificity, segment by segment (ties keep the order of registration)', () => {
    expect(table.routes.map((route) => route.template.source)).toEqual([
      '/v1/things/special',
      '/v1/things/{thing_id}',
      '/v1/files/{thing_id}',
      '/v1/{name=files/**}',
      '/v1/{name=files/**}',
      '/{name=shelves/*}/things',
      '/shelves/{thing_id}/books',
    ]);
  });

  it('finds a literal template before a variable one of the same shape', () => {
    expect(found(table.match('GET', '/v1/things/special'))).toEqual({ method: 'GetSpecialThing', variables: {} });
    expect(found(table.match('GET', '/v1/things/t-1'))).toEqual({ method: 'GetThing', variables: { thing_id: 't-1' } });
  });

  it('finds a trailing ** template for a shape that has no template of its own', () => {
    expect(found(table.match('GET', '/v1/files/a/b/c'))).toEqual({ method: 'GetFile', variables: { name: 'files/a/b/c' } });
    expect(found(table.match('PUT', '/v1/files/a/b/c'))).toEqual({ method: 'PutFile', variables: { name: 'files/a/b/c' } });
  });

  it('merges a trailing ** template into a shape that has templates, behind the more specific ones', () => {
    // "/v1/files/x" has the shape of "/v1/files/{thing_id}" and of "/v1/things/…", and "files/**" matches it too.
    expect(found(table.match('GET', '/v1/files/x'))).toEqual({ method: 'GetFileInfo', variables: { thing_id: 'x' } });
    expect(found(table.match('PUT', '/v1/files/x'))).toEqual({ method: 'PutFile', variables: { name: 'files/x' } });
  });

  it('finds a template with a variable first segment, in a shape of its own and in a shape with a literal template', () => {
    expect(found(table.match('GET', '/shelves/s-1/things'))).toEqual({ method: 'ListShelfThings', variables: { name: 'shelves/s-1' } });
    expect(found(table.match('GET', '/shelves/s-1/books'))).toEqual({ method: 'ListShelfBooks', variables: { thing_id: 's-1' } });
  });

  it('names the methods a path allows when the verb does not match, open templates included', () => {
    expect(table.match('DELETE', '/v1/files/a/b')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'PUT'] });
    expect(table.match('POST', '/v1/files/x')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'PUT'] });
    expect(table.match('POST', '/shelves/s-1/things')).toEqual({ kind: 'method-not-allowed', allowed: ['GET'] });
  });

  it('finds nothing for a path no template covers', () => {
    expect(found(table.match('GET', '/v1/other/a/b'))).toBe('none');
    expect(found(table.match('GET', '/nowhere'))).toBe('none');
    expect(found(table.match('GET', '/shelves/s-1/things/extra'))).toBe('none');
  });
});

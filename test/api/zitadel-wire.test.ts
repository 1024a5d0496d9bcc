/**
 * Wire compatibility, checked field by field: every service of ours in gen/zitadel/ that ZITADEL
 * publishes too (`@zitadel/proto`, the descriptors ZITADEL's own clients are built from) must agree
 * with it on every method we offer (name, input, output, streaming, the google.api.http binding)
 * and on every field of every message those methods reach (number, name, JSON name, kind, type,
 * oneof, proto3 `optional`) and every enum value.
 *
 * Our messages may leave fields out. A request field we leave out is data a client sends that we
 * would never see, so each one must be named, with the reason, in a JSON file of
 * test/api/wire-omissions/ (`{"zitadel.pkg.Message.field_name": "why"}`); response fields we leave
 * out are simply not filled in, which every proto3 client reads as the default.
 */
import fs from 'node:fs';
import path from 'node:path';
import { getOption, hasOption, ScalarType, type DescEnum, type DescField, type DescFile, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { http } from '../../gen/google/api/annotations_pb.js';

const root = path.resolve(import.meta.dirname, '../..');
const ours = path.join(root, 'gen', 'zitadel');
const theirs = path.join(root, 'node_modules', '@zitadel', 'proto', 'es', 'zitadel');

function listPbFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listPbFiles(full);
    return entry.name.endsWith('_pb.js') ? [path.relative(ours, full)] : [];
  }).sort();
}

function isService(value: unknown): value is DescService {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'service';
}

async function servicesIn(file: string): Promise<DescService[]> {
  const module = (await import(file)) as Record<string, unknown>;
  return Object.values(module).filter(isService);
}

function loadOmissions(): Map<string, string> {
  const dir = path.join(import.meta.dirname, 'wire-omissions');
  const omissions = new Map<string, string>();
  if (!fs.existsSync(dir)) return omissions;
  for (const name of fs.readdirSync(dir).filter((file) => file.endsWith('.json')).sort()) {
    const entries = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Record<string, string>;
    for (const [field, reason] of Object.entries(entries)) omissions.set(field, reason);
  }
  return omissions;
}

/** What a field is on the wire and in JSON, as one comparable line. */
function describeField(field: DescField): string {
  const type = (() => {
    switch (field.fieldKind) {
      case 'scalar': return ScalarType[field.scalar];
      case 'enum': return `enum ${field.enum.typeName}`;
      case 'message': return `message ${field.message.typeName}`;
      case 'list':
        switch (field.listKind) {
          case 'scalar': return `repeated ${ScalarType[field.scalar]}`;
          case 'enum': return `repeated enum ${field.enum.typeName}`;
          case 'message': return `repeated message ${field.message.typeName}`;
        }
        break;
      case 'map': {
        const value = field.mapKind === 'scalar' ? ScalarType[field.scalar] : field.mapKind === 'enum' ? `enum ${field.enum.typeName}` : `message ${field.message.typeName}`;
        return `map<${ScalarType[field.mapKey]}, ${value}>`;
      }
    }
    return 'unknown';
  })();
  const oneof = field.oneof === undefined ? '' : ` oneof ${field.oneof.name}`;
  const optional = field.proto.proto3Optional === true ? ' optional' : '';
  return `${field.number} ${field.name} json=${field.jsonName} ${type}${oneof}${optional}`;
}

/**
 * ZITADEL serves its v1 services' REST routes under a prefix of the gateway (`/auth/v1` for
 * zitadel.auth.v1), which its protos leave out and ours, serving the paths of docs/endpoints.md,
 * include.
 */
const gatewayPrefixes: Record<string, string> = { 'zitadel.auth.v1': '/auth/v1', 'zitadel.management.v1': '/management/v1', 'zitadel.admin.v1': '/admin/v1' };

/**
 * REST bindings ZITADEL added after the release `@zitadel/proto` was built from, by method: its
 * current user_service.proto binds the personal access token calls to these paths (and its docs
 * name them), where the published descriptors have none yet.
 */
const laterBindings: Record<string, string> = {
  'zitadel.user.v2.UserService.AddPersonalAccessToken': 'post /v2/users/{user_id}/pats body=* response=',
  'zitadel.user.v2.UserService.RemovePersonalAccessToken': 'delete /v2/users/{user_id}/pats/{token_id} body= response=',
  'zitadel.user.v2.UserService.ListPersonalAccessTokens': 'post /v2/users/pats/search body=* response=',
};

/**
 * Fields ZITADEL added after the release `@zitadel/proto` was built from: its current protos have
 * them (field numbers as there), the published descriptors not yet. Where such a field's message is
 * published already (update_user's UpdateUserRequest is), that message is compared all the same.
 */
const laterFields = new Set([
  'zitadel.user.v2.RetrieveIdentityProviderIntentResponse.update_human_user',
  'zitadel.user.v2.RetrieveIdentityProviderIntentResponse.create_user',
  'zitadel.user.v2.RetrieveIdentityProviderIntentResponse.update_user',
  'zitadel.user.v2.IDPOAuthAccessInformation.refresh_token',
  'zitadel.user.v2.RedirectURLs.login_hint',
]);

/** A message of ZITADEL's by its full name, in a file or the files it imports. */
function findMessage(file: DescFile, typeName: string, seen = new Set<string>()): DescMessage | undefined {
  if (seen.has(file.name)) return undefined;
  seen.add(file.name);
  const walk = (messages: DescMessage[]): DescMessage | undefined => {
    for (const message of messages) {
      if (message.typeName === typeName) return message;
      const nested = walk(message.nestedMessages);
      if (nested !== undefined) return nested;
    }
    return undefined;
  };
  return walk(file.messages) ?? file.dependencies.map((dependency) => findMessage(dependency, typeName, seen)).find((found) => found !== undefined);
}

function httpRule(method: DescMethod, prefix = ''): string {
  if (!hasOption(method, http)) return 'none';
  const rule = getOption(method, http);
  const bindings = [rule, ...rule.additionalBindings].map((binding) => `${binding.pattern.case ?? ''} ${prefix}${String(binding.pattern.value ?? '')} body=${binding.body}`);
  return `${bindings.join(' | ')} response=${rule.responseBody}`;
}

interface Comparison {
  problems: string[];
  omittedRequestFields: string[];
}

function compareServices(our: DescService, their: DescService): Comparison {
  const problems: string[] = [];
  const omittedRequestFields: string[] = [];
  const seenMessages = new Set<string>();
  const seenEnums = new Set<string>();

  function compareEnum(a: DescEnum, b: DescEnum): void {
    if (seenEnums.has(a.typeName)) return;
    seenEnums.add(a.typeName);
    if (a.typeName !== b.typeName) problems.push(`enum ${a.typeName} is ${b.typeName} in ZITADEL`);
    for (const value of a.values) {
      const match = b.values.find((candidate) => candidate.number === value.number);
      if (match === undefined) problems.push(`enum value ${a.typeName}.${value.name} = ${value.number} is not in ZITADEL`);
      else if (match.name !== value.name) problems.push(`enum value ${a.typeName} ${value.number} is ${value.name}, ZITADEL: ${match.name}`);
    }
  }

  function compareMessage(a: DescMessage, b: DescMessage, request: boolean): void {
    const key = `${a.typeName}/${request ? 'request' : 'response'}`;
    if (seenMessages.has(key)) return;
    seenMessages.add(key);
    if (a.typeName !== b.typeName) {
      problems.push(`message ${a.typeName} is ${b.typeName} in ZITADEL`);
      return;
    }
    for (const field of a.fields) {
      const match = b.fields.find((candidate) => candidate.number === field.number);
      if (match === undefined) {
        if (!laterFields.has(`${a.typeName}.${field.name}`)) problems.push(`field ${a.typeName}.${field.name} (${field.number}) is not in ZITADEL`);
        const published = field.message === undefined ? undefined : findMessage(b.file, field.message.typeName);
        if (field.message !== undefined && published !== undefined) compareMessage(field.message, published, request);
        continue;
      }
      const mine = describeField(field);
      const zitadel = describeField(match);
      if (mine !== zitadel) problems.push(`field ${a.typeName}: ours ${mine}, ZITADEL ${zitadel}`);
      if (field.message !== undefined && match.message !== undefined) compareMessage(field.message, match.message, request);
      if (field.enum !== undefined && match.enum !== undefined) compareEnum(field.enum, match.enum);
    }
    if (request) {
      for (const field of b.fields) {
        if (!a.fields.some((candidate) => candidate.number === field.number)) omittedRequestFields.push(`${a.typeName}.${field.name}`);
      }
    }
  }

  for (const method of our.methods) {
    const match = their.methods.find((candidate) => candidate.name === method.name);
    if (match === undefined) {
      problems.push(`method ${our.typeName}.${method.name} is not in ZITADEL`);
      continue;
    }
    if (method.methodKind !== match.methodKind) problems.push(`method ${method.name} is ${method.methodKind}, ZITADEL: ${match.methodKind}`);
    const ourRule = httpRule(method);
    const theirRule = httpRule(match, gatewayPrefixes[their.file.proto.package] ?? '');
    const later = theirRule === 'none' && laterBindings[`${our.typeName}.${method.name}`] === ourRule;
    if (ourRule !== theirRule && !later) problems.push(`method ${method.name} binds ${ourRule}, ZITADEL: ${theirRule}`);
    compareMessage(method.input, match.input, true);
    compareMessage(method.output, match.output, false);
  }
  return { problems, omittedRequestFields };
}

describe('wire compatibility with @zitadel/proto', () => {
  const omissions = loadOmissions();
  const shared = listPbFiles(ours).filter((file) => fs.existsSync(path.join(theirs, file)));

  it('finds the services both publish', async () => {
    const services = (await Promise.all(shared.map((file) => servicesIn(path.join(ours, file))))).flat();
    expect(services.map((service) => service.typeName)).toContain('zitadel.auth.v1.AuthService');
  });

  it.each(shared)('%s agrees with ZITADEL field by field', async (file) => {
    const mine = await servicesIn(path.join(ours, file));
    const zitadel = await servicesIn(path.join(theirs, file));
    const problems: string[] = [];
    const unexplained: string[] = [];
    for (const service of mine) {
      const match = zitadel.find((candidate) => candidate.typeName === service.typeName);
      if (match === undefined) {
        problems.push(`service ${service.typeName} is not in ZITADEL`);
        continue;
      }
      const comparison = compareServices(service, match);
      problems.push(...comparison.problems);
      unexplained.push(...comparison.omittedRequestFields.filter((field) => !omissions.has(field)));
    }
    expect(problems).toEqual([]);
    // Each request field left out needs a reason in test/api/wire-omissions/*.json.
    expect(unexplained).toEqual([]);
  });
});

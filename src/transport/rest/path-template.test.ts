import { compareSpecificity, matchPathTemplate, parsePathTemplate, PathTemplateError } from './path-template.ts';

describe('parsePathTemplate', () => {
  it.each([
    ['/v2/features/instance', ['v2', 'features', 'instance'], [], undefined],
    ['/v3alpha/users/{user_id}/email/resend', ['v3alpha', 'users', '*', 'email', 'resend'], [['user_id', 2, 3]], undefined],
    ['/auth/v1/users/me/auth_factors/otp/_verify', ['auth', 'v1', 'users', 'me', 'auth_factors', 'otp', '_verify'], [], undefined],
    ['/v1/{name=projects/*/keys/*}', ['v1', 'projects', '*', 'keys', '*'], [['name', 1, 5]], undefined],
    ['/v1/{user.id}/files/{path=**}', ['v1', '*', 'files', '**'], [['user.id', 1, 2], ['path', 3, 4]], undefined],
    ['/v1/things/*:undelete', ['v1', 'things', '*'], [], 'undelete'],
    ['/v1/{name=things/*}:cancel', ['v1', 'things', '*'], [['name', 1, 3]], 'cancel'],
  ])('%s', (source, segments, variables, verb) => {
    const template = parsePathTemplate(source);
    expect(template.segments.map((s) => (s.kind === 'literal' ? s.value : s.kind === 'single' ? '*' : '**'))).toEqual(segments);
    expect(template.variables.map((v) => [v.fieldPath.join('.'), v.start, v.end])).toEqual(variables);
    expect(template.verb).toBe(verb);
  });

  it.each([
    ['v2/features', 'must start with "/"'],
    ['/v1/{user_id', 'unterminated'],
    ['/v1/user_id}', 'unbalanced'],
    ['/v1/{a/{b}}', 'nested'],
    ['/v1/{1abc}', 'invalid field path'],
    ['/v1/{id}/{id}', 'bound twice'],
    ['/v1/**/tail', '"**" must be the last'],
    ['/v1/a b', 'invalid segment'],
    ['/v1/{name=a b}', 'invalid segment'],
  ])('rejects %s', (source, reason) => {
    expect(() => parsePathTemplate(source)).toThrow(PathTemplateError);
    expect(() => parsePathTemplate(source)).toThrow(reason);
  });
});

describe('matchPathTemplate', () => {
  it.each([
    ['/v2/features/instance', '/v2/features/instance', {}],
    ['/v3alpha/users/{user_id}/email/resend', '/v3alpha/users/123/email/resend', { user_id: '123' }],
    ['/v3alpha/users/{user_id}/email/resend', '/v3alpha/users/a%2Fb%20c/email/resend', { user_id: 'a/b c' }],
    ['/v3alpha/users/{user_id}/email', '/v3alpha/users/%C3%A9/email', { user_id: 'é' }],
    ['/v1/{name=projects/*/keys/*}', '/v1/projects/p1/keys/k1', { name: 'projects/p1/keys/k1' }],
    ['/v1/{user.id}/files/{path=**}', '/v1/u1/files/a/b/c', { 'user.id': 'u1', path: 'a/b/c' }],
    ['/v1/{user.id}/files/{path=**}', '/v1/u1/files', { 'user.id': 'u1', path: '' }],
    ['/v1/{name=things/*}:cancel', '/v1/things/t1:cancel', { name: 'things/t1' }],
  ])('%s matches %s', (source, path, variables) => {
    const match = matchPathTemplate(parsePathTemplate(source), path);
    expect(match && Object.fromEntries(match.variables)).toEqual(variables);
  });

  it.each([
    ['/v2/features/instance', '/v2/features/instance/'],
    ['/v2/features/instance', '/v2/features'],
    ['/v2/features/instance', '/v2/features/Instance'],
    ['/v2/features/instance', 'v2/features/instance'],
    ['/v3alpha/users/{user_id}/email/resend', '/v3alpha/users//email/resend'],
    ['/v3alpha/users/{user_id}/email/resend', '/v3alpha/users/1/2/email/resend'],
    ['/v3alpha/users/{user_id}/email/resend', '/v3alpha/users/%zz/email/resend'],
    ['/v1/{name=things/*}:cancel', '/v1/things/t1'],
    ['/v1/{name=things/*}:cancel', '/v1/other/t1:cancel'],
  ])('%s does not match %s', (source, path) => {
    expect(matchPathTemplate(parsePathTemplate(source), path)).toBeUndefined();
  });
});

describe('compareSpecificity', () => {
  it('orders literals before variables before **', () => {
    const sources = ['/v1/users/{id=**}', '/v1/users/{id}', '/v1/users/search', '/v1/users/{id}/email', '/v1/{x}/search'];
    const sorted = sources.map(parsePathTemplate).sort(compareSpecificity).map((t) => t.source);
    expect(sorted).toEqual(['/v1/users/search', '/v1/users/{id}/email', '/v1/users/{id}', '/v1/users/{id=**}', '/v1/{x}/search']);
  });
});

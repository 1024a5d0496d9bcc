import { parseScope } from './scopes.ts';

it.each([
  ['openid  profile openid', ['openid', 'profile']],
  ['urn:x:y', ['urn:x:y']],
])('parses the scope %j', (value, expected) => {
  expect(parseScope(value)).toEqual(expected);
});

it.each(['open"id', 'a\\b', 'é'])('refuses the scope %j as invalid_scope', (value) => {
  expect(() => parseScope(value)).toThrow('scope is malformed');
});

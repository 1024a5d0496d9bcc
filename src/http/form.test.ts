import { OAuthError } from './errors.ts';
import { parseParams, parseParamsKeepingFirst } from './form.ts';

it.each([
  ['a=1&b=two+words', { a: '1', b: 'two words' }],
  ['a=%C3%A4%20x', { a: 'ä x' }],
  ['flag&a=', { flag: '', a: '' }],
  ['&&a=1&', { a: '1' }],
  ['a=b=c', { a: 'b=c' }],
])('parses %s', (text, expected) => {
  expect(Object.fromEntries(parseParams(text))).toEqual(expected);
});

it.each([
  ['a truncated escape', 'token=%E0%A4%A'],
  ['a lone percent', 'token=100%'],
  ['invalid UTF-8 in an escape', 'token=%FF'],
  ['an overlong encoding', 'token=%C0%AF'],
  ['a malformed key', '%ZZ=1'],
])('refuses %s with invalid_request', (_name, text) => {
  expect(() => parseParams(text)).toThrow(OAuthError);
  try {
    parseParams(text);
  } catch (error) {
    expect((error as OAuthError).error).toBe('invalid_request');
  }
});

it('reports repeated parameters, keeping the first value', () => {
  expect(() => parseParams('a=1&a=2')).toThrow('a is repeated');
  const { params, repeated } = parseParamsKeepingFirst('a=1&b=2&a=3&b=4&a=5');
  expect(Object.fromEntries(params)).toEqual({ a: '1', b: '2' });
  expect(repeated).toEqual(['a', 'b']);
});

import { checkJsonContentType, isIdentityEncoding } from './content-type.ts';

describe('checkJsonContentType', () => {
  it.each([
    ['application/json', 'json'],
    ['Application/JSON', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['application/json;charset="UTF-8"', 'json'],
    ['application/json; charset=iso-8859-1', 'charset'],
    ['text/plain', 'json'],
    ['Text/Plain; charset=UTF-8', 'json'],
    ['text/plain; charset=us-ascii', 'charset'],
    [undefined, 'json'],
    ['', 'json'],
    [' ', 'json'],
    ['application/x-www-form-urlencoded', 'json'],
    ['application/x-www-form-urlencoded; charset=latin1', 'charset'],
    ['multipart/form-data; boundary=x', 'unsupported'],
    ['application/xml', 'unsupported'],
    ['text/xml', 'unsupported'],
    ['application/octet-stream', 'unsupported'],
    ['application/jsonx', 'unsupported'],
    ['text/plainx', 'unsupported'],
  ])('%s → %s', (header, expected) => {
    expect(checkJsonContentType(header)).toBe(expected);
  });
});

describe('isIdentityEncoding', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['identity', true],
    ['Identity', true],
    ['identity, identity', true],
    ['gzip', false],
    ['br', false],
    ['identity, gzip', false],
    ['x-unknown', false],
  ])('%j → %s', (header, expected) => {
    expect(isIdentityEncoding(header)).toBe(expected);
  });
});

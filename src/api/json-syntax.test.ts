import { jsonSyntaxErrorAt, notValidJson } from './json-syntax.ts';

it.each([
  ['{"a":1,}', 1, 8],
  ['{\n  "a": 1\n  "b": 2\n}', 3, 3],
  ['[1,2', 1, 5],
  ['{"a":tru}', 1, 6],
  ['', 1, 1],
  ['{"a":"\\x"}', 1, 8],
  ['{"a":"\\u12G4"}', 1, 9],
  ['{"a":01}', 1, 7],
  ['{"a":-}', 1, 7],
  ['[1] x', 1, 5],
  ['{a:1}', 1, 2],
  ['"\u0001"', 1, 2],
  ['[,]', 1, 2],
  ['{"a" 1}', 1, 6],
  ['{"a":1}}', 1, 8],
  ['\uFEFF{}', 1, 1],
  [`${'['.repeat(100_000)}x`, 1, 100_001], // no recursion: deep nesting cannot exhaust the stack
])('%j goes wrong at line %i, column %i', (text, line, column) => {
  expect(() => JSON.parse(text)).toThrow(SyntaxError);
  expect(jsonSyntaxErrorAt(text)).toEqual({ line, column });
});

it.each(['{}', '[]', ' {"a":[1,-2.5e+3,{"b":null}],"c":"\\u00e9\\n","d":true,"e":false} ', '"x"', '0'])('%j is JSON', (text) => {
  expect(() => JSON.parse(text)).not.toThrow();
  expect(jsonSyntaxErrorAt(text)).toBeUndefined();
});

it('says where in the answer', () => {
  expect(notValidJson('{\n  "a": 1,\n}')).toBe('request body is not valid JSON: line 3, column 1');
});

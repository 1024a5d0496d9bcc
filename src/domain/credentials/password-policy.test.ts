import { unmetRules } from './password-policy.ts';

describe('password policy', () => {
  it.each([
    ['Correct-Horse-9', []],
    ['Äpfel-und-B1rnen', []],
    ['short1!', ['length', 'upper']],
    ['lowercase-only-1', ['upper']],
    ['UPPERCASE-ONLY-1', ['lower']],
    ['No-Digits-Here', ['digit']],
    ['NoSymbols123', ['symbol']],
    ['With Spaces 12A', ['symbol']],
    ['', ['length', 'upper', 'lower', 'digit', 'symbol']],
  ])('%p misses %p', (password, expected) => {
    expect(unmetRules(password)).toEqual(expected);
  });
});

import { negotiateLocale } from './locale.ts';

describe('negotiateLocale', () => {
  it.each([
    [[], undefined, 'en'],
    [['de'], undefined, 'de'],
    [['de-AT'], 'en', 'de'],
    [['fr', 'de'], undefined, 'de'],
    [['fr'], 'de-DE,de;q=0.9', 'de'],
    [['en'], 'de', 'en'],
    [[], 'fr-CH, fr;q=0.9, de;q=0.8, en;q=0.7', 'de'],
    [[], 'en;q=0.5, de;q=0.9', 'de'],
    [[], 'de;q=0, en', 'en'],
    [[], '*', 'en'],
    [[], 'xx, ,;q=,de;q=abc', 'de'],
    [[], 'EN-us', 'en'],
  ] as const)('ui_locales %p, Accept-Language %p → %p', (ui, accept, expected) => {
    expect(negotiateLocale(ui, accept)).toBe(expected);
  });
});

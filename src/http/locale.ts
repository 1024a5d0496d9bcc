/**
 * The language of a page: the first supported of the request's `ui_locales` (OIDC Core §3.1.2.1),
 * else the best of the browser's Accept-Language (RFC 9110 §12.5.4), else English.
 */
export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];

const DEFAULT_LOCALE: Locale = 'en';

function supported(tag: string): Locale | undefined {
  const primary = tag.trim().split(/[-_]/)[0]!.toLowerCase();
  return LOCALES.find((locale) => locale === primary);
}

/** Accept-Language entries by descending quality (stable for equal weights); q=0 means "not this". */
function acceptedTags(header: string): string[] {
  const entries: { tag: string; q: number; index: number }[] = [];
  header.split(',').slice(0, 20).forEach((part, index) => {
    const [tag = '', ...params] = part.split(';');
    let q = 1;
    for (const param of params) {
      const match = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (match) q = Number(match[1]);
    }
    if (tag.trim() !== '' && q > 0) entries.push({ tag: tag.trim(), q, index });
  });
  return entries.sort((a, b) => b.q - a.q || a.index - b.index).map((e) => e.tag);
}

export function negotiateLocale(uiLocales: readonly string[] = [], acceptLanguage?: string): Locale {
  for (const tag of uiLocales) {
    const locale = supported(tag);
    if (locale) return locale;
  }
  for (const tag of acceptedTags(acceptLanguage ?? '')) {
    const locale = supported(tag);
    if (locale) return locale;
  }
  return DEFAULT_LOCALE;
}

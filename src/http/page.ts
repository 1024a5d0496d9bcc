/**
 * The page shell every browser page shares, the login UI's and the error page: `<html lang>`, the
 * stylesheet, one heading, and an error area announced to assistive technology (role="alert").
 */
import { html, type Html, type Interpolation } from './html.ts';
import type { PageTexts } from './page-texts.ts';
import { STYLESHEET_HREF } from './stylesheet.ts';

export interface PageParts {
  m: PageTexts;
  title: string;
  /** The message of the error area; empty when all is well. */
  alert?: string | undefined;
  body: Interpolation;
}

export function page({ m, title, alert, body }: PageParts): Html {
  return html`<!doctype html>
<html lang="${m.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${m.appName}</title>
<link rel="stylesheet" href="${STYLESHEET_HREF}">
</head>
<body>
<main class="card" aria-labelledby="title">
<p class="brand">${m.appName}</p>
<h1 id="title">${title}</h1>
<div class="alert" role="alert">${alert ? html`<p>${alert}</p>` : ''}</div>
${body}
</main>
</body>
</html>
`;
}

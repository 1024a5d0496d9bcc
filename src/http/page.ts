/**
 * The page shell every browser page shares, the login UI's and the error page: `<html lang>`, the
 * stylesheet and the icon, which application the user is signing in to (when one asked), one
 * heading, a notice of what just succeeded (role="status") and an error area announced to assistive
 * technology (role="alert").
 */
import { DEFAULT_FAVICON_HREF } from './favicon.ts';
import { html, type Html, type Interpolation } from './html.ts';
import type { PageTexts } from './page-texts.ts';
import { STYLESHEET_HREF } from './stylesheet.ts';

export interface PageParts {
  m: PageTexts;
  title: string;
  /** The name of the application the user signs in to; none for pages no application asked for. */
  application?: string | undefined;
  /** What just succeeded (a password changed, a passkey added); empty when nothing did. */
  notice?: string | undefined;
  /** The message of the error area; empty when all is well. */
  alert?: string | undefined;
  body: Interpolation;
  /** The page's icon; Gatehouse's own by default. */
  icon?: string | undefined;
}

export function page({ m, title, application, notice, alert, body, icon }: PageParts): Html {
  return html`<!doctype html>
<html lang="${m.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${application ?? m.appName}</title>
<link rel="icon" href="${icon ?? DEFAULT_FAVICON_HREF}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLESHEET_HREF}">
</head>
<body>
<main class="card" aria-labelledby="title">
<p class="brand">${m.appName}</p>
${application === undefined ? '' : html`<p class="application">${m.signInTo(application)}</p>`}
<h1 id="title">${title}</h1>
${notice ? html`<div class="notice" role="status"><p>${notice}</p></div>` : ''}
<div class="alert" role="alert">${alert ? html`<p>${alert}</p>` : ''}</div>
${body}
</main>
</body>
</html>
`;
}

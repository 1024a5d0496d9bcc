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
  /** An organization's branding (login/branding.ts); none keeps Gatehouse's own look. */
  branding?: PageBranding | undefined;
}

/** An image with the one that stands in for it under a dark `prefers-color-scheme`. */
export interface ThemedImage {
  src: string;
  dark?: string | undefined;
}

/** What an organization's branding changes on a page (docs/branding-and-login-policy.md#on-the-login-pages). */
export interface PageBranding {
  /** Its stylesheet, linked after Gatehouse's: the colours as custom properties. */
  stylesheet: string;
  /** Its logo, in place of Gatehouse's name. */
  logo?: ThemedImage | undefined;
  /** Its icon, in place of Gatehouse's. */
  icon?: ThemedImage | undefined;
}

// The media query of a dark image, as ZITADEL's login follows the reader's system in THEME_MODE_AUTO.
const DARK = '(prefers-color-scheme: dark)';

function iconLinks(icon: string | undefined, branding: PageBranding | undefined): Html {
  const own = branding?.icon;
  // An organization's icon may be PNG, JPEG, GIF, WebP or SVG: its type is left to the response.
  if (own === undefined) return html`<link rel="icon" href="${icon ?? DEFAULT_FAVICON_HREF}" type="image/svg+xml">`;
  return html`<link rel="icon" href="${own.src}">${own.dark === undefined ? '' : html`
<link rel="icon" href="${own.dark}" media="${DARK}">`}`;
}

function brandLine(m: PageTexts, logo: ThemedImage | undefined): Html {
  if (logo === undefined) return html`<p class="brand">${m.appName}</p>`;
  // The application's name follows it, so the logo itself is decoration to assistive technology.
  const image = html`<img src="${logo.src}" alt="">`;
  return html`<p class="brand brand-logo">${logo.dark === undefined ? image : html`<picture><source srcset="${logo.dark}" media="${DARK}">${image}</picture>`}</p>`;
}

export function page({ m, title, application, notice, alert, body, icon, branding }: PageParts): Html {
  return html`<!doctype html>
<html lang="${m.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${application ?? m.appName}</title>
${iconLinks(icon, branding)}
<link rel="stylesheet" href="${STYLESHEET_HREF}">
${branding === undefined ? '' : html`<link rel="stylesheet" href="${branding.stylesheet}">
`}</head>
<body>
<main class="card" aria-labelledby="title">
${brandLine(m, branding?.logo)}
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

/**
 * An organization's branding on the login pages (docs/branding-and-login-policy.md#on-the-login-pages):
 * its colours as a stylesheet of CSS custom properties linked after Gatehouse's, its logo in place of
 * Gatehouse's name, its icon as the favicon, and login names without the `@domain` suffix when it
 * hides them.
 *
 * - ZITADEL's defaults (`source` 'default': the instance never changed its branding) add nothing: the
 *   pages keep Gatehouse's own look, byte for byte, and no extra request.
 * - The colours reach the page as a stylesheet of their own at
 *   /ui/login/assets/branding/{owner}.css?v={hash}, not inline: the pages' Content-Security-Policy
 *   stays `style-src 'self'` (http/respond.ts). The hash names the content, so browsers keep it for a
 *   year and still see every activation.
 * - Defence in depth: colours are checked when written (domain/instance/colours.ts), and here every
 *   one is parsed again and written as `#rrggbb` from its numbers; no stored text reaches the CSS.
 * - The text on the primary colour (button labels) is black or white by luminance (`textColourOn`),
 *   so it stays readable whatever the primary colour; the other colours are the organization's
 *   choice, kept as they are even where their contrast is poor.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { parseColour, textColourOn } from '../domain/instance/colours.ts';
import type { OrgSettings } from '../domain/instance/directory.ts';
import { DEFAULT_LABEL, type Branding, type ColourField } from '../domain/instance/policies.ts';
import { showErrorPage } from '../http/error-page.ts';
import { negotiateLocale } from '../http/locale.ts';
import type { PageBranding, ThemedImage } from '../http/page.ts';
import { LOGIN_UI_PATH } from '../http/paths.ts';
import { findOrg } from '../store/orgs.ts';
import { messagesFor } from './messages.ts';

/** Where an owner's branding stylesheet is served (login/routes.ts). */
export const BRANDING_STYLESHEET_ROUTE = '/assets/branding/:owner.css';

/** The public address of an uploaded image (api/assets.ts: GET /assets/v1/{owner}/{key}). */
function assetPath(ownerId: string, key: string | null): string | undefined {
  return key === null ? undefined : `/assets/v1/${encodeURIComponent(ownerId)}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/** A stored colour as `#rrggbb` from its parsed channels; ZITADEL's default when it does not parse. */
function hexOf(branding: Branding, field: ColourField): string {
  const rgb = parseColour(branding[field]) ?? parseColour(DEFAULT_LABEL[field])!;
  return `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The custom properties of http/assets/gatehouse.css for one scheme. Background, font, primary and
 * warn colour are the organization's; the card takes the background (ZITADEL's login has no card of
 * another colour), muted text and borders are the font colour mixed into the background, and the
 * hover colour moves the primary away from its text colour, so hovering never lowers the contrast.
 */
function palette(primary: string, background: string, font: string, warn: string): string {
  const onPrimary = textColourOn(primary);
  const away = onPrimary === '#ffffff' ? '#000000' : '#ffffff';
  return [
    `--bg: ${background};`,
    `--card: ${background};`,
    `--text: ${font};`,
    `--muted: color-mix(in srgb, ${font} 75%, ${background});`,
    `--border: color-mix(in srgb, ${font} 45%, ${background});`,
    `--accent: ${primary};`,
    `--accent-text: ${onPrimary};`,
    `--accent-hover: color-mix(in srgb, ${primary} 85%, ${away});`,
    `--danger: ${warn};`,
    `--danger-bg: color-mix(in srgb, ${warn} 10%, ${background});`,
    `--focus: ${primary};`,
  ]
    .map((line) => `  ${line}`)
    .join('\n');
}

function stylesheetOf(branding: Branding): string {
  const light = palette(hexOf(branding, 'primaryColor'), hexOf(branding, 'backgroundColor'), hexOf(branding, 'fontColor'), hexOf(branding, 'warnColor'));
  const dark = palette(
    hexOf(branding, 'primaryColorDark'),
    hexOf(branding, 'backgroundColorDark'),
    hexOf(branding, 'fontColorDark'),
    hexOf(branding, 'warnColorDark'),
  );
  // Linked after gatehouse.css: a plain :root rule here outweighs both of its schemes by order.
  const schemes =
    branding.themeMode === 'light'
      ? `:root {\n  color-scheme: light;\n${light}\n}\n`
      : branding.themeMode === 'dark'
        ? `:root {\n  color-scheme: dark;\n${dark}\n}\n`
        : `:root {\n  color-scheme: light dark;\n${light}\n}\n\n@media (prefers-color-scheme: dark) {\n  :root {\n${dark.replace(/^/gm, '  ')}\n  }\n}\n`;
  return `/* Gatehouse login UI: the colours of one organization's branding (docs/branding-and-login-policy.md). */\n\n${schemes}
.brand-logo img {
  display: block;
  width: auto;
  height: auto;
  max-width: 12rem;
  max-height: 3rem;
}
`;
}

/**
 * A light and a dark image as the theme mode shows them: a fixed mode shows its own (the other when
 * it has none); AUTO shows the light one and the dark one under a dark `prefers-color-scheme`.
 */
function themed(branding: Branding, light: string | undefined, dark: string | undefined): ThemedImage | undefined {
  if (branding.themeMode === 'dark') return dark ?? light ? { src: (dark ?? light)! } : undefined;
  const src = light ?? dark;
  if (src === undefined) return undefined;
  return branding.themeMode !== 'light' && dark !== undefined && dark !== src ? { src, dark } : { src };
}

interface Look {
  page: PageBranding;
  css: string;
  hash: string;
}

// The directory caches one Branding object per organization until a change clears it, so the look
// is worked out once per activation, not per page.
const looks = new WeakMap<Branding, Look | null>();

function lookOf(branding: Branding): Look | undefined {
  let look = looks.get(branding);
  if (look === undefined) {
    look = null;
    if (branding.source !== 'default') {
      const css = stylesheetOf(branding);
      const hash = createHash('sha256').update(css).digest('hex').slice(0, 12);
      const { images, ownerId } = branding;
      look = {
        css,
        hash,
        page: {
          stylesheet: `${LOGIN_UI_PATH}/assets/branding/${encodeURIComponent(ownerId)}.css?v=${hash}`,
          logo: themed(branding, assetPath(ownerId, images.logo), assetPath(ownerId, images.logoDark)),
          icon: themed(branding, assetPath(ownerId, images.icon), assetPath(ownerId, images.iconDark)),
        },
      };
    }
    looks.set(branding, look);
  }
  return look ?? undefined;
}

/** What http/page.ts adds to a page for this branding; nothing for ZITADEL's defaults. */
export function pageBranding(branding: Branding): PageBranding | undefined {
  return lookOf(branding)?.page;
}

/** The stylesheet of this branding, as served; none for ZITADEL's defaults. */
export function brandingStylesheet(branding: Branding): string | undefined {
  return lookOf(branding)?.css;
}

const OWNER = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * GET /ui/login/assets/branding/{owner}.css: the stylesheet of an owner's active branding (an
 * organization's, or the instance's under the instance id). The current hash in `v` gets a year's
 * cache; another (a page rendered before an activation) gets the current colours, revalidated.
 */
export function serveBrandingStylesheet(gh: Gatehouse) {
  return async (req: Request, res: Response): Promise<void> => {
    const owner = String(req.params['owner'] ?? '');
    const settings = OWNER.test(owner) ? await gh.directory.orgSettings(gh.instanceId, owner === gh.instanceId ? undefined : owner) : undefined;
    const look = settings === undefined || settings.branding.ownerId !== owner ? undefined : lookOf(settings.branding);
    if (look === undefined) {
      const m = messagesFor(negotiateLocale([], req.headers['accept-language']));
      return showErrorPage(res, m, { status: 404, error: 'not_found', description: `no branding of its own: ${owner}` });
    }
    res
      .status(200)
      .set('Content-Type', 'text/css; charset=utf-8')
      .set('Cache-Control', req.query['v'] === look.hash ? 'public, max-age=31536000, immutable' : 'no-cache')
      .set('X-Content-Type-Options', 'nosniff')
      .end(look.css);
  };
}

/**
 * `hideLoginNameSuffix` (ZITADEL's login then shows the user name without the organization's
 * `@domain`): the suffix the pages leave off, `@` and the primary domain of the request's
 * organization, when its branding hides it; undefined otherwise, without a read.
 */
export async function hiddenLoginNameSuffix(gh: Gatehouse, settings: OrgSettings, orgId: string | undefined): Promise<string | undefined> {
  if (!settings.branding.hideLoginNameSuffix || orgId === undefined) return undefined;
  const org = await findOrg(gh.db, orgId);
  return org === undefined ? undefined : `@${org.primary_domain}`;
}

/**
 * A login name as a page shows it (the account chooser, "Signing in as" on the steps after the
 * login name): without the hidden suffix when it ends in it, so a user of the organization reads as
 * the user name and everyone else keeps the `@domain` that tells organizations apart. It looks only
 * at the text, never at whether the user exists, so the password step still says nothing about
 * that (docs/decisions.md#login-names-and-lockout).
 */
export function shownLoginName(step: { hiddenSuffix: string | undefined }, loginName: string): string {
  const suffix = step.hiddenSuffix;
  if (suffix === undefined || loginName.length <= suffix.length) return loginName;
  const cut = loginName.length - suffix.length;
  return loginName.slice(cut).toLowerCase() === suffix.toLowerCase() ? loginName.slice(0, cut) : loginName;
}

/**
 * The API reference page, GET /docs: Swagger UI rendering /openapi.json. Its files come from the
 * swagger-ui-dist package and are served by Gatehouse itself (no CDN), read once per process and
 * answered from memory: a fixed list of exact paths, so no request can name another file.
 *
 * The page has its own Content-Security-Policy: scripts and styles from this server only (the
 * start-up script is a file too, not inline), requests to this server and the external URL (the
 * document, "Try it out", the OpenID Connect discovery and token requests), no framing.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { html } from '../../http/html.ts';
import { formTargetOf } from '../../http/respond.ts';
import { OPENAPI_PATH } from './openapi.ts';
import { staticBody, type StaticBody } from './static-body.ts';

export const DOCS_PATH = '/docs';

/** The package files the page uses, with their content types. */
const PACKAGE_FILES: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const NOSNIFF = { 'x-content-type-options': 'nosniff' };
const YEAR = 'public, max-age=31536000, immutable';

// The package's files do not change while the process runs: read and compressed once for every server in it.
let packageBodies: ReadonlyMap<string, Uint8Array> | undefined;
let assetBodies: Map<string, StaticBody> | undefined;

function packageFile(name: string): Uint8Array {
  if (packageBodies === undefined) {
    const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    packageBodies = new Map(Object.keys(PACKAGE_FILES).map((file) => [file, readFileSync(path.join(dir, file))]));
  }
  const bytes = packageBodies.get(name);
  if (bytes === undefined) throw new Error(`swagger-ui-dist file not listed: ${name}`);
  return bytes;
}

/** A script, style sheet or image of the package (HTML pages get their headers per server). */
function asset(name: string): StaticBody {
  assetBodies ??= new Map();
  let body = assetBodies.get(name);
  if (body === undefined) {
    body = staticBody(packageFile(name), { contentType: PACKAGE_FILES[name] ?? 'application/octet-stream', cacheControl: 'no-cache', versionedCacheControl: YEAR, headers: NOSNIFF });
    assetBodies.set(name, body);
  }
  return body;
}

/**
 * Every path of the reference page with what it answers (GET and HEAD), for `externalUrl`:
 * the page, its start-up script and the package files.
 */
export function docsFiles(externalUrl: string): Map<string, StaticBody> {
  const base = new URL(externalUrl).pathname.replace(/\/+$/, ''); // behind a path prefix, links keep it
  const headers = pageHeaders(externalUrl);
  const css = asset('swagger-ui.css');
  const bundle = asset('swagger-ui-bundle.js');
  const icon32 = asset('favicon-32x32.png');
  const icon16 = asset('favicon-16x16.png');
  const startUp = staticBody(Buffer.from(startUpScript(base, externalUrl)), {
    contentType: 'text/javascript; charset=utf-8',
    cacheControl: 'no-cache',
    versionedCacheControl: YEAR,
    headers: NOSNIFF,
  });
  const link = (file: string, body: StaticBody): string => `${base}${DOCS_PATH}/${file}?v=${body.hash}`;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="stylesheet" href="${link('swagger-ui.css', css)}">
<link rel="icon" type="image/png" sizes="32x32" href="${link('favicon-32x32.png', icon32)}">
<link rel="icon" type="image/png" sizes="16x16" href="${link('favicon-16x16.png', icon16)}">
</head>
<body>
<noscript><p>The API reference needs JavaScript. The OpenAPI document is at <a href="${base}${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="${link('swagger-ui-bundle.js', bundle)}"></script>
<script src="${link('start.js', startUp)}"></script>
</body>
</html>
`;
  const htmlPage = (bytes: Uint8Array): StaticBody => staticBody(bytes, { contentType: 'text/html; charset=utf-8', cacheControl: 'no-cache', headers });
  return new Map<string, StaticBody>([
    [DOCS_PATH, htmlPage(Buffer.from(page.value))],
    [`${DOCS_PATH}/start.js`, startUp],
    [`${DOCS_PATH}/swagger-ui.css`, css],
    [`${DOCS_PATH}/swagger-ui-bundle.js`, bundle],
    [`${DOCS_PATH}/favicon-32x32.png`, icon32],
    [`${DOCS_PATH}/favicon-16x16.png`, icon16],
    // Swagger UI's return page for its OAuth sign-in; it loads oauth2-redirect.js beside it.
    [`${DOCS_PATH}/oauth2-redirect.html`, htmlPage(packageFile('oauth2-redirect.html'))],
    [`${DOCS_PATH}/oauth2-redirect.js`, asset('oauth2-redirect.js')],
  ]);
}

/** Swagger UI's configuration: a file, so that the page's policy allows no inline script. */
function startUpScript(base: string, externalUrl: string): string {
  const config = {
    url: `${base}${OPENAPI_PATH}`,
    dom_id: '#swagger-ui',
    deepLinking: true,
    filter: true,
    validatorUrl: null, // Swagger's online validator would receive the document
    layout: 'BaseLayout',
    oauth2RedirectUrl: `${externalUrl.replace(/\/+$/, '')}${DOCS_PATH}/oauth2-redirect.html`,
  };
  return [
    `'use strict';`,
    `const ui = SwaggerUIBundle(Object.assign(${JSON.stringify(config)}, { presets: [SwaggerUIBundle.presets.apis] }));`,
    `ui.initOAuth({ usePkceWithAuthorizationCodeGrant: true });`,
    `window.ui = ui;`,
    '',
  ].join('\n');
}

function pageHeaders(externalUrl: string): Record<string, string> {
  const external = formTargetOf(externalUrl);
  const connect = ["'self'", ...(external === undefined ? [] : [external])].join(' ');
  return {
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src ${connect}; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY', // docs/security.md 10.14, for browsers without frame-ancestors
    ...NOSNIFF,
    'referrer-policy': 'no-referrer',
  };
}

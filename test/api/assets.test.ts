/**
 * Branding images (docs/branding-and-login-policy.md#uploading-a-logo-or-an-icon): multipart uploads
 * at /assets/v1/{org|instance}/policy/label/{logo|icon}[/dark] with the API's bearer tokens, into the
 * preview; public reads at /assets/v1/{owner}/{key} with ETag and 304. Only images, recognised by
 * their bytes, of at most 512 KiB; refusals are plain text naming the problem.
 */
import { createClient } from '@connectrpc/connect';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { AdminService } from '@zitadel/proto/zitadel/admin_pb.js';
import { SettingsService } from '@zitadel/proto/zitadel/settings/v2/settings_service_pb.js';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiTokens, managementDocument, MGMT, transports, type Caller } from '../support/management.ts';

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  server = await startTestServer(managementDocument());
  tokens = await apiTokens(server);
});
afterAll(() => server.stop());

// A 1×1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.from('R0lGODlhAQABAAAAACwAAAAAAQABAAA=', 'base64');
const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>');

const as = (caller: Caller, orgId?: string) => ({ headers: { authorization: `Bearer ${tokens[caller]}`, ...(orgId === undefined ? {} : { 'x-zitadel-orgid': orgId }) } });
const mgmt = () => createClient(ManagementService, transports(() => server)[2]![1]());

async function upload(path: string, caller: Caller | undefined, file: Buffer | string | undefined, options: { orgId?: string; field?: string; type?: string } = {}) {
  const form = new FormData();
  if (file !== undefined) form.set(options.field ?? 'file', typeof file === 'string' ? file : new Blob([file], { type: options.type ?? 'image/png' }), ...(typeof file === 'string' ? [] : ['logo.png'] as const));
  const headers: Record<string, string> = caller === undefined ? {} : as(caller, options.orgId).headers;
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers, body: form });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

describe('uploads', () => {
  beforeAll(async () => {
    await mgmt().addCustomLabelPolicy({ primaryColor: '#123456' }, as('orgAdmin'));
  });

  it('an organization owner uploads a logo into the preview; activation makes it public in the branding', async () => {
    const uploaded = await upload('/assets/v1/org/policy/label/logo', 'orgAdmin', PNG);
    expect(uploaded).toMatchObject({ status: 200 });
    const preview = await mgmt().getPreviewLabelPolicy({}, as('orgAdmin'));
    const logoUrl = preview.policy!.logoUrl;
    expect(logoUrl).toMatch(new RegExp(`^${server.url}/assets/v1/${MGMT.org}/policy/label/logo-\\d+$`));
    expect((await mgmt().getLabelPolicy({}, as('orgAdmin'))).policy?.logoUrl).toBe('');

    await mgmt().activateCustomLabelPolicy({}, as('orgAdmin'));
    const branding = await createClient(SettingsService, transports(() => server)[0]![1]()).getBrandingSettings({}, as('orgAdmin'));
    expect(branding.settings?.lightTheme?.logoUrl).toBe(logoUrl);

    const read = await fetch(logoUrl);
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('image/png');
    expect(read.headers.get('x-content-type-options')).toBe('nosniff');
    expect(read.headers.get('cache-control')).toMatch(/public/);
    expect(Buffer.from(await read.arrayBuffer())).toEqual(PNG);
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(logoUrl, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect((await fetch(logoUrl, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    // ZITADEL's clients add ?v= to bust caches.
    expect((await fetch(`${logoUrl}?v=2`)).status).toBe(200);
  });

  it('a dark icon goes to its own slot; removing it clears only that slot', async () => {
    expect((await upload('/assets/v1/org/policy/label/icon/dark', 'orgAdmin', GIF, { type: 'image/gif' })).status).toBe(200);
    const preview = (await mgmt().getPreviewLabelPolicy({}, as('orgAdmin'))).policy!;
    expect(preview.iconUrlDark).toMatch(/\/policy\/label\/icon-dark-\d+$/);
    expect(preview.iconUrl).toBe('');
    expect(preview.logoUrl).not.toBe('');
    await mgmt().removeCustomLabelPolicyIconDark({}, as('orgAdmin'));
    expect((await mgmt().getPreviewLabelPolicy({}, as('orgAdmin'))).policy?.iconUrlDark).toBe('');
    // Never activated, so no longer kept.
    expect((await fetch(preview.iconUrlDark)).status).toBe(404);
  });

  it('an SVG is served so that it runs nothing', async () => {
    expect((await upload('/assets/v1/org/policy/label/icon', 'orgAdmin', SVG, { type: 'image/svg+xml' })).status).toBe(200);
    const url = (await mgmt().getPreviewLabelPolicy({}, as('orgAdmin'))).policy!.iconUrl;
    const read = await fetch(url);
    expect(read.headers.get('content-type')).toBe('image/svg+xml');
    expect(read.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/);
    expect(read.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('the instance owner uploads the instance logo; organization owners may not', async () => {
    expect((await upload('/assets/v1/instance/policy/label/logo', 'iamAdmin', PNG)).status).toBe(200);
    const preview = await createClient(AdminService, transports(() => server)[1]![1]()).getPreviewLabelPolicy({}, as('iamAdmin'));
    expect(preview.policy?.logoUrl).toContain(`/assets/v1/${server.running.gh.instanceId}/policy/label/logo-`);
    const refused = await upload('/assets/v1/instance/policy/label/logo', 'orgAdmin', PNG);
    expect(refused).toMatchObject({ status: 403, text: 'IAM_OWNER role required\n' });
  });

  it.each([
    ['another organization named by the header', 'orgAdmin', MGMT.otherOrg, 403],
    ['an organization without branding of its own', 'otherAdmin', undefined, 404],
    ['a caller without a management role', 'plain', undefined, 403],
  ] as const)('refuses %s', async (_what, caller, orgId, status) => {
    const refused = await upload('/assets/v1/org/policy/label/logo', caller, PNG, orgId === undefined ? {} : { orgId });
    expect(refused.status).toBe(status);
    expect(refused.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it.each([
    ['no token', undefined, 401, 'authentication required'],
    ['a bad token', 'bad', 401, 'invalid or expired token'],
  ])('refuses %s', async (_what, token, status, text) => {
    const form = new FormData();
    form.set('file', new Blob([PNG]), 'logo.png');
    const response = await fetch(`${server.url}/assets/v1/org/policy/label/logo`, { method: 'POST', body: form, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(status);
    expect(await response.text()).toBe(`${text}\n`);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each([
    ['a file that is not an image', Buffer.from('#!/bin/sh\necho hello\n'), {}, 'the file is not an image: PNG, JPEG, GIF, WebP or SVG'],
    ['an HTML page declared as PNG', Buffer.from('<html><script>alert(1)</script></html>'), { type: 'image/png' }, 'the file is not an image: PNG, JPEG, GIF, WebP or SVG'],
    ['an oversized image', Buffer.concat([PNG, Buffer.alloc(600 * 1024)]), {}, 'the file is larger than 512 KiB'],
    ['an image just over the limit', Buffer.concat([PNG, Buffer.alloc(512 * 1024 + 1 - PNG.length)]), {}, 'the file is larger than 512 KiB'],
    ['an empty file', Buffer.alloc(0), {}, 'the file is empty'],
    ['a form without the field', PNG, { field: 'image' }, 'the form has no field "file"'],
    ['a text field', 'hello', {}, 'the field "file" must be a file'],
  ] as const)('refuses %s with 400', async (_what, file, options, text) => {
    const refused = await upload('/assets/v1/org/policy/label/logo', 'orgAdmin', file, options);
    expect(refused).toMatchObject({ status: 400, text: `${text}\n` });
  });

  it('accepts an image of exactly 512 KiB', async () => {
    expect((await upload('/assets/v1/org/policy/label/logo', 'orgAdmin', Buffer.concat([PNG, Buffer.alloc(512 * 1024 - PNG.length)]))).status).toBe(200);
  });

  it('refuses a body that is not a multipart form', async () => {
    const response = await fetch(`${server.url}/assets/v1/org/policy/label/logo`, { method: 'POST', headers: { ...as('orgAdmin').headers, 'content-type': 'image/png' }, body: PNG });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('the request must be multipart/form-data with the image in the field "file"\n');
  });
});

describe('public reads', () => {
  it.each([
    [`/assets/v1/${MGMT.org}/policy/label/logo-1`, 404],
    ['/assets/v1/nothing', 404],
    ['/assets/v1/%E0%A4%A/x', 400],
  ])('%s is %i', async (path, status) => {
    const response = await fetch(`${server.url}${path}`);
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('refuses other methods', async () => {
    expect((await fetch(`${server.url}/assets/v1/${MGMT.org}/policy/label/logo-1`, { method: 'DELETE' })).status).toBe(405);
    expect((await fetch(`${server.url}/assets/v1/org/policy/label/logo`)).status).toBe(405);
  });
});

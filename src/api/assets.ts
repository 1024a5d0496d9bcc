/**
 * The asset endpoints of ZITADEL's API (docs/branding-and-login-policy.md#uploading-a-logo-or-an-icon;
 * ZITADEL internal/api/assets): uploads of branding images and their public reads. Plain HTTP, not
 * a protobuf service, so answers are plain text as ZITADEL's are.
 *
 * - POST /assets/v1/{org|instance}/policy/label/{logo|icon}[/dark]: a multipart form with the image
 *   in the field `file`, at most 512 KiB (ZITADEL's 1 << 19), a PNG, JPEG, GIF, WebP or SVG image as
 *   its bytes say (the declared type is not trusted). It goes to the branding preview. The caller is
 *   checked as an API call's (bearer token, scopes, audience: auth-interceptor.ts
 *   `bearerPrincipal`), then as the management calls' (policy/views.ts `managedOrg`: the
 *   organization of `x-zitadel-orgid`, else the caller's) or the admin calls' (IAM_OWNER).
 * - GET /assets/v1/{owner}/{key}: public, with the content hash as ETag (If-None-Match: 304). An SVG
 *   is served with a Content-Security-Policy that lets it run nothing, and every answer with
 *   `X-Content-Type-Options: nosniff`, so an uploaded file is never run as a page's script.
 */
import type http from 'node:http';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Gatehouse } from '../context.ts';
import { MAX_IMAGE_BYTES, sniffImage } from '../domain/instance/images.ts';
import { setBrandingImage, type ImageKind, type PolicyOwner } from '../domain/instance/policies.ts';
import { creatorOf, hasRole, type Principal } from '../domain/kernel/principal.ts';
import { Refusal } from '../domain/kernel/refusals.ts';
import { findAsset, findAssetHash } from '../store/assets.ts';
import { bearerPrincipal, type AuthOptions } from './auth-interceptor.ts';
import { managedOrg, ORG_HEADER } from './policy/views.ts';
import { apiAudienceScope } from '../config/index.ts';

export const ASSETS_PREFIX = '/assets/v1/';

/** Room for the multipart framing (boundaries, part headers) around the largest image. */
const MAX_BODY_BYTES = MAX_IMAGE_BYTES + 16 * 1024;

const UPLOAD = /^\/assets\/v1\/(org|instance)\/policy\/label\/(logo|icon)(\/dark)?$/;

/** A refused request: its status and the plain-text reason. */
class AssetError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

function answer(res: http.ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...headers });
  res.end(text === '' ? '' : `${text}\n`);
}

/** The body, refused past `limit` bytes without reading the rest. */
async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new AssetError(400, 'the file is larger than 512 KiB');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AssetError(400, 'the file is larger than 512 KiB');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The uploaded file of a multipart form, parsed by Node's own fetch implementation (undici). */
async function uploadedFile(req: http.IncomingMessage): Promise<Uint8Array> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(contentType)) throw new AssetError(400, 'the request must be multipart/form-data with the image in the field "file"');
  const body = await readBody(req, MAX_BODY_BYTES);
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new AssetError(400, 'the multipart form cannot be read');
  }
  const file = form.get('file');
  if (file === null) throw new AssetError(400, 'the form has no field "file"');
  if (typeof file === 'string') throw new AssetError(400, 'the field "file" must be a file');
  if (file.size === 0) throw new AssetError(400, 'the file is empty');
  if (file.size > MAX_IMAGE_BYTES) throw new AssetError(400, 'the file is larger than 512 KiB');
  return new Uint8Array(await file.arrayBuffer());
}

/** An API error of the caller checks, as plain HTTP. */
function callerError(error: unknown): unknown {
  if (!(error instanceof ConnectError)) return error;
  const challenge = error.metadata.get('www-authenticate');
  const headers: Record<string, string> = challenge === null ? {} : { 'www-authenticate': challenge };
  if (error.code === Code.Unauthenticated) return new AssetError(401, error.rawMessage, headers);
  if (error.code === Code.PermissionDenied) return new AssetError(403, error.rawMessage, headers);
  if (error.code === Code.NotFound) return new AssetError(404, error.rawMessage);
  return error;
}

export interface AssetsOptions extends Pick<AuthOptions, 'authenticate' | 'apiAudience'> {}

export function assetsEndpoint(gh: Gatehouse, options: AssetsOptions): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const auth = { ...options, instanceId: () => gh.instanceId, log: gh.log };
  const required = ['openid', apiAudienceScope(gh.config.serviceName)];

  async function upload(req: http.IncomingMessage, res: http.ServerResponse, match: RegExpExecArray): Promise<void> {
    let principal: Principal;
    let owner: PolicyOwner;
    try {
      principal = await bearerPrincipal(auth, req.headers.authorization ?? null, required);
      if (match[1] === 'instance') {
        if (!hasRole(principal, 'IAM_OWNER')) throw new AssetError(403, 'IAM_OWNER role required');
        owner = { instanceId: gh.instanceId };
      } else {
        const header = req.headers[ORG_HEADER];
        owner = { instanceId: gh.instanceId, orgId: await managedOrg(gh, principal, Array.isArray(header) ? header[0] : header) };
      }
    } catch (error) {
      throw callerError(error);
    }
    const data = await uploadedFile(req);
    const contentType = sniffImage(data);
    if (contentType === undefined) throw new AssetError(400, 'the file is not an image: PNG, JPEG, GIF, WebP or SVG');
    const kind = `${match[2]}${match[3] === undefined ? '' : 'Dark'}` as ImageKind;
    const writer = { instanceId: gh.instanceId, creator: creatorOf(principal) };
    try {
      await gh.db.transaction().execute((trx) => setBrandingImage(trx, writer, owner, kind, { contentType, data }));
    } catch (error) {
      if (error instanceof Refusal && error.kind === 'not_found') throw new AssetError(404, error.message);
      throw error;
    }
    gh.directory.clear();
    answer(res, 200, '');
  }

  async function read(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    const slash = path.indexOf('/');
    if (slash <= 0) throw new AssetError(404, 'no such asset');
    const ownerId = decodeURIComponent(path.slice(0, slash));
    const key = decodeURIComponent(path.slice(slash + 1));
    const hash = await findAssetHash(gh.db, ownerId, key);
    if (hash === undefined) throw new AssetError(404, 'no such asset');
    const common = { etag: hash, 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' };
    const condition = req.headers['if-none-match'];
    // RFC 9110 §13.1.2: a list of entity tags, or *.
    if (condition !== undefined && (condition.trim() === '*' || condition.split(',').map((tag) => tag.trim().replace(/^W\//, '')).includes(hash))) {
      res.writeHead(304, common).end();
      return;
    }
    const asset = await findAsset(gh.db, ownerId, key);
    if (asset === undefined) throw new AssetError(404, 'no such asset');
    res.writeHead(200, {
      ...common,
      'content-type': asset.content_type,
      'content-length': String(asset.data.byteLength),
      // An SVG may carry scripts: opened on its own it runs none, loads nothing, and is sandboxed.
      ...(asset.content_type === 'image/svg+xml' ? { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : Buffer.from(asset.data));
  }

  return async (req, res) => {
    try {
      const path = (req.url ?? '').split('?')[0]!;
      const match = UPLOAD.exec(path);
      if (match !== null) {
        if (req.method !== 'POST') throw new AssetError(405, 'upload with POST', { allow: 'POST' });
        await upload(req, res, match);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new AssetError(405, 'assets are read with GET', { allow: 'GET, HEAD' });
      await read(req, res, path.slice(ASSETS_PREFIX.length));
    } catch (error) {
      if (error instanceof AssetError) {
        // The rest of an oversized or refused upload is not read: close the connection after the answer.
        if (!req.readableEnded) res.setHeader('connection', 'close');
        answer(res, error.status, error.message, error.headers);
        return;
      }
      if (error instanceof URIError) {
        answer(res, 400, 'the asset path is not valid');
        return;
      }
      gh.log.error({ err: error }, 'asset request failed');
      if (!res.headersSent) answer(res, 500, 'internal error');
    }
  };
}

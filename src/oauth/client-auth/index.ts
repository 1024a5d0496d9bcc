/**
 * Client authentication at the OAuth endpoints (docs/decisions.md#client-authentication).
 * The method is read from the request (Basic header, client_assertion, client_secret, or client_id
 * alone); more than one is invalid_request. The client must be registered for the method it used,
 * and the endpoint or grant must accept that method. Failed authentications are limited per client
 * address (docs/security.md 10.11).
 */
import type { IncomingMessage } from 'node:http';
import type { Gatehouse } from '../../context.ts';
import { decoyVerify } from '../../domain/kernel/crypto.ts';
import type { Application, User } from '../../domain/instance/directory.ts';
import { Throttled } from '../../domain/sign-in/failure-throttle.ts';
import { limitKeyOf } from '../../http/client-address.ts';
import { InvalidClient, InvalidRequest } from '../errors.ts';
import { optional, type Params } from '../../http/form.ts';
import { parseBasic } from './basic.ts';
import { unverifiedIssuer } from '../assertions.ts';
import { TOKEN_PATH } from '../paths.ts';
import { ASSERTION_TYPE, verifyClientAssertion } from './private-key-jwt.ts';
import { secretMatches } from './secret.ts';
import type { AuthMethod } from '../../oidc/vocabulary.ts';

export type AuthenticatedClient =
  | { kind: 'app'; clientId: string; method: AuthMethod; app: Application }
  | { kind: 'machine'; clientId: string; method: AuthMethod; user: User };

interface Presented {
  method: AuthMethod;
  clientId: string;
  secret?: string;
  assertion?: string;
}

/** Which credentials the request carries. */
export function presentedCredentials(req: IncomingMessage, params: Params): Presented | undefined {
  const header = req.headers.authorization;
  const basic = header !== undefined && /^basic /i.test(header);
  const assertion = optional(params, 'client_assertion');
  const assertionType = optional(params, 'client_assertion_type');
  const secret = params.get('client_secret');
  const clientId = optional(params, 'client_id');
  const mechanisms = [basic, assertion !== undefined || assertionType !== undefined, secret !== undefined].filter(Boolean).length;
  if (mechanisms > 1) throw new InvalidRequest('several client authentication methods were used');

  if (basic) {
    const credentials = parseBasic(header!);
    if (clientId !== undefined && clientId !== credentials.clientId) throw new InvalidRequest('client_id does not match the authorization header');
    return { method: 'client_secret_basic', clientId: credentials.clientId, secret: credentials.secret };
  }
  if (assertion !== undefined || assertionType !== undefined) {
    if (assertionType !== ASSERTION_TYPE) throw new InvalidRequest(`client_assertion_type must be ${ASSERTION_TYPE}`);
    if (assertion === undefined) throw new InvalidRequest('client_assertion is required');
    const issuer = unverifiedIssuer(assertion, 'client_assertion');
    if (clientId !== undefined && clientId !== issuer) throw new InvalidRequest('client_id does not match the client assertion');
    return { method: 'private_key_jwt', clientId: issuer, assertion };
  }
  if (secret !== undefined) {
    if (clientId === undefined) throw new InvalidRequest('client_id is required');
    return { method: 'client_secret_post', clientId, secret };
  }
  if (clientId !== undefined) return { method: 'none', clientId };
  return undefined;
}

export interface AuthenticateOptions {
  /** Methods this endpoint or grant accepts. */
  accepted: readonly AuthMethod[];
  /** Whether a machine user may authenticate with its secret (client_credentials). */
  machines: boolean;
  /** The URL of the endpoint called: an accepted audience of client assertions. */
  endpointUrl: string;
  /** Accept HTTP Basic from a client registered for client_secret_post (the endpoint takes no post). */
  basicForPost?: boolean;
}

/**
 * docs/security.md 10.11: an address past its limit of failures is refused before anything is
 * looked up or hashed, whatever it presents: refusing only wrong secrets would tell a right one
 * apart (and a remembered right secret costs no hash). Every invalid_client counts as a failure but
 * one that guesses nothing (`InvalidClient.guess`).
 */
export async function authenticateClient(
  gh: Gatehouse,
  req: IncomingMessage,
  params: Params,
  options: AuthenticateOptions,
): Promise<AuthenticatedClient> {
  const address = limitKeyOf(req, gh.config.trustedProxies);
  const wait = gh.throttle.retryAfter(address);
  if (wait > 0) throw new Throttled(wait);
  try {
    return await authenticate(gh, req, params, options);
  } catch (error) {
    if (error instanceof InvalidClient && error.guess) gh.throttle.recordFailure(address);
    throw error;
  }
}

async function authenticate(gh: Gatehouse, req: IncomingMessage, params: Params, options: AuthenticateOptions): Promise<AuthenticatedClient> {
  const presented = presentedCredentials(req, params);
  const basic = presented?.method === 'client_secret_basic';
  if (!presented) throw new InvalidClient('no client authentication');
  if (!options.accepted.includes(presented.method)) {
    throw new InvalidClient(`${presented.method} is not accepted here`, basic, true, { clientId: presented.clientId });
  }

  const app = await gh.directory.application(gh.instanceId, presented.clientId);
  if (app) {
    const registered = app.authMethod === presented.method || (options.basicForPost === true && basic && app.authMethod === 'client_secret_post');
    if (!registered) {
      if (presented.secret !== undefined) await decoyVerify(presented.secret);
      // Go's x/oauth2 first tries a public client's id with an empty secret in Basic, then the id in
      // the form: an empty secret for a client that has none guesses nothing, so it is not counted.
      const guess = !(app.authMethod === 'none' && presented.secret === '');
      const mismatch = `client is registered for ${app.authMethod}, not ${presented.method}`;
      throw new InvalidClient(mismatch, basic, guess, { clientId: presented.clientId, description: `client authentication failed: ${mismatch}` });
    }
    await verify(gh, presented, app.secretHash, app.keys, options);
    return { kind: 'app', clientId: app.clientId, method: presented.method, app };
  }

  if (options.machines && presented.secret !== undefined) {
    const user = await gh.directory.machineByName(gh.instanceId, presented.clientId);
    if (user && user.state === 'active' && user.secretHash) {
      await verify(gh, presented, user.secretHash, [], options);
      return { kind: 'machine', clientId: user.userName, method: presented.method, user };
    }
  }
  // Unknown clients cost what known ones cost, so timing tells nothing.
  if (presented.secret !== undefined) await decoyVerify(presented.secret);
  throw new InvalidClient(`unknown client ${presented.clientId}`, basic, true, { clientId: presented.clientId });
}

async function verify(
  gh: Gatehouse,
  presented: Presented,
  secretHash: string | null,
  keys: Application['keys'],
  options: AuthenticateOptions,
): Promise<void> {
  const basic = presented.method === 'client_secret_basic';
  switch (presented.method) {
    case 'client_secret_basic':
    case 'client_secret_post':
      if (!secretHash || !(await secretMatches(secretHash, presented.secret!))) {
        throw new InvalidClient('client secret does not match', basic, true, { clientId: presented.clientId });
      }
      return;
    case 'private_key_jwt':
      await verifyClientAssertion(gh.db, presented.assertion!, {
        clientId: presented.clientId,
        keys,
        // docs/security.md 10.9: the issuer, the token endpoint, or the endpoint the assertion is presented to
        audiences: [gh.config.externalUrl, `${gh.config.externalUrl}${TOKEN_PATH}`, options.endpointUrl],
        now: new Date(),
      });
      return;
    case 'none':
      return;
  }
}

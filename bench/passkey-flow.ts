/**
 * The passkey sign-in of the bench's code flow (docs/passkeys.md#signing-in-with-a-passkey), as the
 * login UI's script does it: the username-less form of the login name page asks for a challenge, the
 * authenticator signs it, and the form posts the assertion, which the server answers with the
 * callback. The suites' software authenticator (test/support/webauthn.ts) stands in for the
 * browser's.
 *
 * The server refuses an assertion whose counter does not go up, so flows that run at the same time
 * must not share a credential: each worker has an authenticator of its own, with one passkey of the
 * bench's passkey user, registered through the v2 API as an administrator would.
 */
import { SoftAuthenticator } from '../test/support/webauthn.ts';
import { expectRedirect, type SignIn } from './code-flow.ts';

type RequestOptions = Parameters<SoftAuthenticator['get']>[0];
type CreationOptions = Parameters<SoftAuthenticator['create']>[0];

/** The page's passkey form: where it posts the assertion (action) and where it asks for a challenge (data-options). */
function passkeyForm(body: string, pageUrl: string): { action: string; options: string } {
  const tag = /<form [^>]*class="passkey"[^>]*>/.exec(body)?.[0];
  const action = tag === undefined ? undefined : / action="([^"]+)"/.exec(tag)?.[1];
  const options = tag === undefined ? undefined : / data-options="([^"]+)"/.exec(tag)?.[1];
  if (action === undefined || options === undefined) throw new Error('login page: no passkey form (are passkeys enabled?)');
  return { action: new URL(action, pageUrl).href, options: new URL(options, pageUrl).href };
}

/** Username-less sign-in from the login name page with the authenticator's (only) credential. */
export function passkeySignIn(authenticator: SoftAuthenticator): SignIn {
  return async ({ browser, url, requestId, csrf, body }) => {
    const form = passkeyForm(body, url);
    const fields = { authRequestID: requestId, csrfToken: csrf, mode: 'login' };
    const started = await browser.post(form.options, fields);
    if (started.status !== 200) throw new Error(`passkey options: ${started.status}`);
    const { challengeId, options } = JSON.parse(started.body) as { challengeId: string; options: RequestOptions };
    const credential = authenticator.get(options);
    const signed = await browser.post(form.action, { ...fields, challengeId, credential: JSON.stringify(credential) });
    return expectRedirect(signed, 'passkey');
  };
}

async function postJson(url: string, token: string, body: object): Promise<Record<string, unknown>> {
  const reply = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await reply.json()) as Record<string, unknown>;
  if (reply.status !== 200) throw new Error(`${url}: ${reply.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * `count` authenticators, each with a passkey of the user registered over REST (RegisterPasskey,
 * then VerifyPasskeyRegistration) by an administrator's `token`. `base` is the server's external URL,
 * the page the ceremony runs on.
 */
export async function registerPasskeys(base: string, token: string, userId: string, count: number): Promise<SoftAuthenticator[]> {
  const authenticators: SoftAuthenticator[] = [];
  for (let i = 0; i < count; i++) {
    const passkeys = `${base}/v2/users/${userId}/passkeys`;
    const registered = await postJson(passkeys, token, {});
    const options = registered['publicKeyCredentialCreationOptions'] as { publicKey: CreationOptions } | undefined;
    if (options === undefined) throw new Error('RegisterPasskey: no creation options');
    const authenticator = new SoftAuthenticator(base);
    const credential = authenticator.create(options.publicKey);
    await postJson(`${passkeys}/${String(registered['passkeyId'])}`, token, { publicKeyCredential: credential, passkeyName: `bench ${i + 1}` });
    authenticators.push(authenticator);
  }
  return authenticators;
}

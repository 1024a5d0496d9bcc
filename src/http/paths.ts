/**
 * The paths by which the OAuth endpoints and the login UI send the browser to each other. Both are
 * endpoints and neither imports the other (transport → endpoints → http/), so the paths they share
 * are named here once.
 */

/** Where the login UI is mounted (docs/endpoints.md#login-ui). */
export const LOGIN_UI_PATH = '/ui/login';

/** /authorize hands a request to the login UI, which sends the browser back here when it is done. */
export const AUTHORIZE_CALLBACK_PATH = '/oauth/v2/authorize/callback';

/** The logout confirmation page that /oidc/v1/end_session sends unconfirmed requests to. */
export const LOGOUT_CONFIRM_PATH = `${LOGIN_UI_PATH}/logout`;

/** The page after a logout with nowhere to redirect to. */
export const LOGGED_OUT_PATH = `${LOGIN_UI_PATH}/logged-out`;

/**
 * Where /authorize sends a known user to sign in again (a session that lacks the second factor the
 * login policy asks for): the login UI picks the first step (passkey or password).
 */
export const FIRST_FACTOR_PATH = `${LOGIN_UI_PATH}/first-factor`;

/**
 * Redirect URIs, and post-logout redirect URIs under the same rules: which an application may
 * register (the bootstrap file and the management API ask `redirectUriProblem`), and whether the URI
 * of an authorization or logout request names one of them (`redirectUriMatches`).
 *
 * Web and browser applications register https URIs (http for loopback hosts, or anywhere in dev
 * mode) and are matched exactly, as text. Native applications (RFC 8252) may also register a
 * private-use scheme in reverse-domain form (`com.example.app:/callback`), and their loopback IP URIs
 * (`http://127.0.0.1/callback`, `http://[::1]/callback`) match on any port, since such an app listens
 * on a port the operating system picks at run time. Only the port is free: scheme, host, path and
 * query still match exactly.
 *
 * `http://localhost` is a loopback host but no loopback IP: it may be registered, and is matched
 * exactly like any other URI. RFC 8252 §8.3 advises against it (the name may resolve to another
 * interface than the loopback one, or be answered by a firewall or a hosts file), and every client
 * that listens on a port of its choosing can use `127.0.0.1` instead, as git-credential-oauth does.
 *
 * Nothing is matched as a pattern: a `*` is refused rather than compared as a character, and so is
 * user information (`user:password@host`), which makes a URI read as another host than it names.
 */
import type { OidcAppType } from '../../store/schema.ts';

/** Hosts that plain http may name without dev mode: the traffic never leaves the machine. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Schemes that run code, read local files or name web addresses: never a private-use scheme. */
const REFUSED_SCHEME = /^(?:javascript|vbscript|data|file|blob|about|filesystem|http.*)$/;

/** RFC 8252 §7.1: a domain name the app controls, in reverse order (`com.example.app`), lower case. */
const REVERSE_DOMAIN = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+$/;

/** RFC 8252 §7.3: `http://127.0.0.1[:port]` or `http://[::1][:port]`, then a path, a query or nothing. */
const LOOPBACK_IP = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?(?=[/?]|$)/;

export interface RedirectUriRules {
  appType: OidcAppType;
  devMode: boolean;
}

/** What is wrong with a URI an application registers (RFC 6749 §3.1.2, RFC 8252 §7), or undefined. */
export function redirectUriProblem(uri: string, rules: RedirectUriRules): string | undefined {
  if (/\s/.test(uri)) return 'must not contain spaces';
  if (uri.includes('*')) return 'must not contain "*": redirect URIs are compared exactly, never as patterns';
  const url = URL.parse(uri);
  if (url === null) return 'must be an absolute URI (https://host/path)';
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 §3.1.2)';
  if (hasUserInfo(uri, url)) return 'must not contain user information (user:password@)';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname) || rules.devMode) return undefined;
    return 'must use https; http is only allowed for localhost, 127.0.0.1 or [::1], or with devMode: true';
  }
  if (rules.appType !== 'native') {
    return 'must use https (or http for localhost); a private-use scheme such as com.example.app:/callback needs appType native';
  }
  return privateUseProblem(uri);
}

/** `user@` or `user:password@` before the host, also when empty (`https://@host`). */
function hasUserInfo(uri: string, url: URL): boolean {
  if (url.username !== '' || url.password !== '') return true;
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(uri)?.[1];
  return authority?.includes('@') ?? false;
}

/** RFC 8252 §7.1: a private-use scheme is a reverse domain name, followed by a path. */
function privateUseProblem(uri: string): string | undefined {
  const colon = uri.indexOf(':');
  const scheme = uri.slice(0, colon);
  if (REFUSED_SCHEME.test(scheme.toLowerCase()) || !REVERSE_DOMAIN.test(scheme)) {
    return 'must use https, http on a loopback address, or a private-use scheme named by a reverse domain name in lower case, such as com.example.app:/callback (RFC 8252 §7.1)';
  }
  if (uri[colon + 1] !== '/') return 'must have a path after the scheme, such as com.example.app:/callback (RFC 8252 §7.1)';
  return undefined;
}

/**
 * Whether `requested` names one of the `registered` URIs: the same text, or for a native application
 * a loopback IP URI that differs at most in its port (RFC 8252 §7.3: the authorization server MUST
 * allow any port for loopback IP redirect URIs).
 */
export function redirectUriMatches(registered: readonly string[], requested: string, appType: OidcAppType): boolean {
  if (registered.includes(requested)) return true;
  if (appType !== 'native') return false;
  const wanted = withoutLoopbackPort(requested);
  return wanted !== undefined && registered.some((uri) => withoutLoopbackPort(uri) === wanted);
}

/**
 * A loopback IP URI without its port, the rest of the text as it is (an empty path read as "/",
 * RFC 3986 §6.2.3, since Go's test servers listen at `http://127.0.0.1:port`); undefined for any
 * other URI, or a port outside 1–65535.
 */
function withoutLoopbackPort(uri: string): string | undefined {
  const match = LOOPBACK_IP.exec(uri);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const rest = uri.slice(match[0].length);
  return `http://${match[1]}${rest.startsWith('/') ? rest : `/${rest}`}`;
}

import { redirectUriMatches, redirectUriProblem } from './redirect-uris.ts';

const web = { appType: 'web', devMode: false } as const;
const native = { appType: 'native', devMode: false } as const;

describe('redirectUriProblem', () => {
  it.each([
    ['https://app.example/cb', web],
    ['https://app.example/cb?tenant=1', web],
    ['http://localhost:3000/cb', web],
    ['http://127.0.0.1/cb', web],
    ['http://[::1]/cb', web],
    ['http://shop.internal/cb', { appType: 'web', devMode: true }],
    ['com.example.app:/cb', native],
    ['com.example.app:/oauth2redirect/example-provider', native],
    ['com.example.app://callback', native],
    ['com.googleusercontent.apps.123-abc:/oauth2redirect', native],
    ['http://127.0.0.1/cb', native],
    ['http://127.0.0.1:8080/cb', native],
    ['http://[::1]/cb', native],
    ['http://localhost/cb', native],
    ['https://app.example/cb', native],
  ] as const)('accepts %s (%j)', (uri, rules) => {
    expect(redirectUriProblem(uri, rules)).toBeUndefined();
  });

  it.each([
    ['https://*.evil.example/cb', native, /must not contain "\*"/],
    ['https://app.example/*', web, /must not contain "\*"/],
    ['com.example.*:/cb', native, /must not contain "\*"/],
    ['https://user:pw@app.example/cb', web, /must not contain user information/],
    ['https://user@app.example/cb', web, /must not contain user information/],
    ['https://@app.example/cb', web, /must not contain user information/],
    ['http://user@127.0.0.1/cb', native, /must not contain user information/],
    ['com.example.app://user@host/cb', native, /must not contain user information/],
    ['/callback', web, /must be an absolute URI/],
    ['https://app.example/cb#x', web, /must not contain a fragment/],
    ['https://app.example/c b', web, /must not contain spaces/],
    ['http://app.example/cb', web, /must use https; http is only allowed for localhost/],
    ['http://127.0.0.2/cb', native, /must use https; http is only allowed for localhost/],
    ['com.example.app:/cb', web, /a private-use scheme such as com\.example\.app:\/callback needs appType native/],
    ['com.example.app:/cb', { appType: 'user_agent', devMode: true }, /needs appType native/],
    ['myapp://done', native, /reverse domain name in lower case/],
    ['javascript:alert(1)//', native, /reverse domain name/],
    ['data:text/html,hi', native, /reverse domain name/],
    ['file:///etc/passwd', native, /reverse domain name/],
    ['vbscript:msgbox', native, /reverse domain name/],
    ['https.example.app:/cb', native, /reverse domain name/],
    ['http.evil.example:/cb', native, /reverse domain name/],
    ['Com.Example.App:/cb', native, /in lower case/],
    ['com.example.app:cb', native, /must have a path after the scheme/],
    ['com.example.app:', native, /must have a path after the scheme/],
  ] as const)('refuses %s (%j)', (uri, rules, problem) => {
    expect(redirectUriProblem(uri, rules)).toMatch(problem);
  });
});

describe('redirectUriMatches', () => {
  const registered = ['http://127.0.0.1/cb', 'http://[::1]/cb?x=1', 'http://127.0.0.1', 'com.example.app:/cb', 'http://localhost:8080/cb', 'https://app.example/cb'];

  it.each([
    ['http://127.0.0.1:54321/cb', 'native'],
    ['http://127.0.0.1/cb', 'native'],
    ['http://127.0.0.1:1/cb', 'native'],
    ['http://127.0.0.1:65535/cb', 'native'],
    ['http://[::1]:54321/cb?x=1', 'native'],
    ['http://127.0.0.1:54321', 'native'],
    ['http://127.0.0.1:54321/', 'native'],
    ['com.example.app:/cb', 'native'],
    ['http://localhost:8080/cb', 'native'],
    ['https://app.example/cb', 'web'],
    ['http://127.0.0.1/cb', 'web'],
  ] as const)('%s matches for a %s application', (requested, appType) => {
    expect(redirectUriMatches(registered, requested, appType)).toBe(true);
  });

  it.each([
    ['http://127.0.0.1:54321/cb', 'web', 'any port is for native applications only'],
    ['http://127.0.0.1:54321/cb', 'user_agent', 'any port is for native applications only'],
    ['http://127.0.0.1:54321/other', 'native', 'another path'],
    ['http://127.0.0.1:54321/cb/', 'native', 'a trailing slash'],
    ['http://127.0.0.1:54321/CB', 'native', 'another letter case in the path'],
    ['http://127.0.0.1:54321/cb?x=1', 'native', 'another query'],
    ['http://127.0.0.1:54321/cb#x', 'native', 'a fragment'],
    ['http://[::1]:54321/cb', 'native', 'the query left out'],
    ['http://127.0.0.2:54321/cb', 'native', 'another loopback address'],
    ['http://localhost:54321/cb', 'native', 'localhost on another port'],
    ['https://127.0.0.1:54321/cb', 'native', 'https instead of http'],
    ['HTTP://127.0.0.1:54321/cb', 'native', 'the scheme in capitals'],
    ['http://127.0.0.1:0/cb', 'native', 'port 0'],
    ['http://127.0.0.1:65536/cb', 'native', 'a port beyond 65535'],
    ['http://127.0.0.1:123456/cb', 'native', 'six digits of port'],
    ['http://127.0.0.1:/cb', 'native', 'an empty port'],
    ['http://127.0.0.1:54321@evil.example/cb', 'native', 'user information'],
    ['http://127.0.0.1.evil.example:54321/cb', 'native', 'a host that starts like a loopback address'],
    ['http://127.0.0.1:54321\\@evil.example/cb', 'native', 'a backslash before the path'],
    ['com.example.app:/cb/', 'native', 'another private-use URI'],
    ['https://app.example:8443/cb', 'native', 'another port of an https URI'],
  ] as const)('%s does not match for a %s application (%s)', (requested, appType, _why) => {
    expect(redirectUriMatches(registered, requested, appType)).toBe(false);
  });
});

/**
 * The scope `urn:<service>:iam:org:idp:id:{idpId}` (docs/federation.md#signing-in-with-a-provider):
 * a client names the identity provider a sign-in goes straight to. The token endpoint checks it
 * (oauth/scopes.ts) and the login UI follows it, both from here.
 */

const patterns = new Map<string, RegExp>();

/** Compiled once per service name (one per process), not on every request. */
export function idpScopePattern(serviceName: string): RegExp {
  let pattern = patterns.get(serviceName);
  if (pattern === undefined) {
    pattern = new RegExp(`^urn:${serviceName}:iam:org:idp:id:([0-9A-Za-z_-]+)$`);
    patterns.set(serviceName, pattern);
  }
  return pattern;
}

/** The provider named by the scope among `scopes`: the login UI goes straight to it. */
export function idpOfScopes(serviceName: string, scopes: readonly string[]): string | undefined {
  const pattern = idpScopePattern(serviceName);
  for (const scope of scopes) {
    const match = pattern.exec(scope);
    if (match) return match[1]!;
  }
  return undefined;
}

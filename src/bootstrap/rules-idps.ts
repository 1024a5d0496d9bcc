/**
 * Validation of `identityProviders` (docs/bootstrap.md#identity-providers), at the top of the
 * document (the instance's) and per organization. Field names are those of the Add requests
 * (AddGenericOIDCProviderRequest, AddGenericOAuthProviderRequest) in camelCase, with `kind` saying
 * which; enums by their names. The values themselves (URLs, lengths) are checked by the federation
 * wing when the file is applied, as for the API.
 */
import type { AutoLinking, ProviderInput, ProviderOptions } from '../domain/federation/providers.ts';
import type { IdentityProviderSpec } from './document.ts';
import { Fields, type Issues } from './validator.ts';

const COMMON = ['kind', 'name', 'clientId', 'clientSecret', 'scopes', 'providerOptions', 'usePkce'];
const OIDC_KEYS = [...COMMON, 'issuer', 'isIdTokenMapping'];
const OAUTH_KEYS = [...COMMON, 'authorizationEndpoint', 'tokenEndpoint', 'userEndpoint', 'idAttribute'];
const OPTION_KEYS = ['isLinkingAllowed', 'isCreationAllowed', 'isAutoCreation', 'isAutoUpdate', 'autoLinking'];
const AUTO_LINKING: Record<string, AutoLinking> = {
  AUTO_LINKING_OPTION_UNSPECIFIED: 'none',
  AUTO_LINKING_OPTION_USERNAME: 'username',
  AUTO_LINKING_OPTION_EMAIL: 'email',
};

function readOptions(issues: Issues, at: string, value: unknown): ProviderOptions | undefined {
  const fields = Fields.of(issues, at, value, OPTION_KEYS);
  if (!fields) return undefined;
  const autoLinking = fields.enumValue('autoLinking', Object.keys(AUTO_LINKING));
  return {
    isLinkingAllowed: fields.boolean('isLinkingAllowed') ?? false,
    isCreationAllowed: fields.boolean('isCreationAllowed') ?? false,
    isAutoCreation: fields.boolean('isAutoCreation') ?? false,
    isAutoUpdate: fields.boolean('isAutoUpdate') ?? false,
    autoLinking: autoLinking === undefined ? 'none' : AUTO_LINKING[autoLinking]!,
  };
}

export function readIdentityProvider(issues: Issues, at: string, value: unknown): IdentityProviderSpec | undefined {
  const kindOf = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)['kind'] : undefined;
  const fields = Fields.of(issues, at, value, kindOf === 'oauth' ? OAUTH_KEYS : kindOf === 'oidc' ? OIDC_KEYS : [...new Set([...OIDC_KEYS, ...OAUTH_KEYS])]);
  if (!fields) return undefined;
  const kind = fields.requiredEnum('kind', ['oidc', 'oauth'] as const);
  const name = fields.requiredString('name');
  const clientId = fields.requiredString('clientId');
  const clientSecret = fields.string('clientSecret');
  const scopes = fields.stringList('scopes', (item, where) => {
    if (typeof item === 'string') return item;
    issues.add(where, 'must be a string');
    return undefined;
  }) ?? [];
  const options = fields.has('providerOptions') ? readOptions(issues, fields.at('providerOptions'), fields.raw('providerOptions')) : undefined;
  const usePkce = fields.boolean('usePkce') ?? false;
  if (kind === undefined || name === undefined || clientId === undefined) return undefined;
  const common = { name, clientId, clientSecret, scopes, usePkce, options: options ?? { isLinkingAllowed: false, isCreationAllowed: false, isAutoCreation: false, isAutoUpdate: false, autoLinking: 'none' as const } };
  let input: ProviderInput;
  if (kind === 'oidc') {
    const issuer = fields.requiredString('issuer');
    if (issuer === undefined) return undefined;
    input = { ...common, kind, issuer, isIdTokenMapping: fields.boolean('isIdTokenMapping') ?? false };
  } else {
    const authorizationEndpoint = fields.requiredString('authorizationEndpoint');
    const tokenEndpoint = fields.requiredString('tokenEndpoint');
    const userEndpoint = fields.requiredString('userEndpoint');
    const idAttribute = fields.requiredString('idAttribute');
    if (authorizationEndpoint === undefined || tokenEndpoint === undefined || userEndpoint === undefined || idAttribute === undefined) return undefined;
    input = { ...common, kind, authorizationEndpoint, tokenEndpoint, userEndpoint, idAttribute };
  }
  return { path: at, input };
}

/** Names must be unique among one owner's providers: the file matches providers by name. */
export function checkProviderNames(issues: Issues, providers: IdentityProviderSpec[]): void {
  const seen = new Map<string, string>();
  for (const provider of providers) {
    const name = provider.input.name.trim();
    const first = seen.get(name);
    if (first !== undefined) issues.add(`${provider.path}.name`, `"${name}" is the name of ${first} too: names of identity providers are unique per owner`);
    else seen.set(name, provider.path);
  }
}

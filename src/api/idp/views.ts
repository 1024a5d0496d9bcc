/**
 * Identity providers on the wire (docs/federation.md): requests of the v1 admin and management
 * calls read into the domain's input, providers written out as zitadel.idp.v1 and zitadel.idp.v2
 * messages and as settings v2 IdentityProviders. The client secret is never written out.
 *
 * The type enums differ: idp.v1 ProviderType and idp.v2 IDPType number OIDC = 1, OAUTH = 4 alike,
 * settings.v2 IdentityProviderType too (they part at SAML and Apple); the login policy's legacy
 * idp.v1 IDPType knows only OIDC and JWT, so OAuth providers are UNSPECIFIED there (ZITADEL's
 * internal/api/grpc/idp/converter.go).
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import {
  AutoLinkingOption, IDPOwnerType, IDPState, IDPType, ProviderType, type IDPLoginPolicyLinkSchema, type IDPNameQuery, type IDPOwnerTypeQuery, type Options,
  type ProviderSchema,
} from '../../../gen/zitadel/idp_pb.js';
import { AutoLinkingOption as V2AutoLinking, IDPState as V2State, IDPType as V2Type, type IDPSchema } from '../../../gen/zitadel/idp/v2/idp_pb.js';
import type { ListDetailsSchema, ListQuery } from '../../../gen/zitadel/object_pb.js';
import { IdentityProviderType, type IdentityProviderSchema } from '../../../gen/zitadel/settings/v2/login_settings_pb.js';
import type { AutoLinking, OAuthInput, OidcInput, PolicyIdp, Provider, ProviderOptions } from '../../domain/federation/providers.ts';
import { invalidArgument, pageOf, textFilter } from '../management/lists.ts';

const AUTO_LINKING: Record<AutoLinking, AutoLinkingOption> = {
  none: AutoLinkingOption.UNSPECIFIED,
  username: AutoLinkingOption.USERNAME,
  email: AutoLinkingOption.EMAIL,
};

/** The options of a request; absent: everything off. */
export function optionsOf(options: Options | undefined, field: string): ProviderOptions {
  const autoLinking = (Object.keys(AUTO_LINKING) as AutoLinking[]).find((key) => AUTO_LINKING[key] === (options?.autoLinking ?? 0));
  if (autoLinking === undefined) {
    throw invalidArgument(`${field}.autoLinking`, 'must be one of AUTO_LINKING_OPTION_UNSPECIFIED, AUTO_LINKING_OPTION_USERNAME, AUTO_LINKING_OPTION_EMAIL');
  }
  return {
    isLinkingAllowed: options?.isLinkingAllowed ?? false,
    isCreationAllowed: options?.isCreationAllowed ?? false,
    isAutoCreation: options?.isAutoCreation ?? false,
    isAutoUpdate: options?.isAutoUpdate ?? false,
    autoLinking,
  };
}

interface OidcRequest {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  providerOptions?: Options | undefined;
  isIdTokenMapping: boolean;
  usePkce: boolean;
}

interface OAuthRequest {
  name: string;
  clientId: string;
  clientSecret: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userEndpoint: string;
  scopes: string[];
  idAttribute: string;
  providerOptions?: Options | undefined;
  usePkce: boolean;
}

export function oidcInput(req: OidcRequest): OidcInput {
  return {
    kind: 'oidc',
    name: req.name,
    issuer: req.issuer,
    clientId: req.clientId,
    clientSecret: req.clientSecret,
    scopes: req.scopes,
    options: optionsOf(req.providerOptions, 'providerOptions'),
    isIdTokenMapping: req.isIdTokenMapping,
    usePkce: req.usePkce,
  };
}

export function oauthInput(req: OAuthRequest): OAuthInput {
  return {
    kind: 'oauth',
    name: req.name,
    clientId: req.clientId,
    clientSecret: req.clientSecret,
    authorizationEndpoint: req.authorizationEndpoint,
    tokenEndpoint: req.tokenEndpoint,
    userEndpoint: req.userEndpoint,
    scopes: req.scopes,
    idAttribute: req.idAttribute,
    options: optionsOf(req.providerOptions, 'providerOptions'),
    usePkce: req.usePkce,
  };
}

function v1Options(options: ProviderOptions) {
  return { ...options, autoLinking: AUTO_LINKING[options.autoLinking] };
}

function v2Options(options: ProviderOptions) {
  const autoLinking = { none: V2AutoLinking.UNSPECIFIED, username: V2AutoLinking.USERNAME, email: V2AutoLinking.EMAIL }[options.autoLinking];
  return { ...options, autoLinking };
}

/** What v1 and v2 say alike of a provider: its details, and its kind's settings (v1 adds `usePkce`). */
function shared(provider: Provider) {
  return {
    details: {
      resourceOwner: provider.orgId ?? provider.instanceId,
      creationDate: timestampFromDate(provider.createdAt),
      changeDate: timestampFromDate(provider.changedAt),
    },
    config:
      provider.kind === 'oidc'
        ? { case: 'oidc' as const, value: { issuer: provider.issuer, clientId: provider.clientId, scopes: provider.scopes, isIdTokenMapping: provider.isIdTokenMapping } }
        : {
          case: 'oauth' as const,
          value: {
            clientId: provider.clientId,
            authorizationEndpoint: provider.authorizationEndpoint,
            tokenEndpoint: provider.tokenEndpoint,
            userEndpoint: provider.userEndpoint,
            scopes: provider.scopes,
            idAttribute: provider.idAttribute,
          },
        },
  };
}

/** zitadel.idp.v1.Provider, without the secret. */
export function toProvider(provider: Provider): MessageInitShape<typeof ProviderSchema> {
  const { details, config } = shared(provider);
  return {
    id: provider.id,
    details,
    state: provider.state === 'active' ? IDPState.IDP_STATE_ACTIVE : IDPState.IDP_STATE_INACTIVE,
    name: provider.name,
    owner: provider.orgId === null ? IDPOwnerType.IDP_OWNER_TYPE_SYSTEM : IDPOwnerType.IDP_OWNER_TYPE_ORG,
    type: provider.kind === 'oidc' ? ProviderType.OIDC : ProviderType.OAUTH,
    config: { options: v1Options(provider.options), config: { ...config, value: { ...config.value, usePkce: provider.usePkce } } },
  };
}

/** zitadel.idp.v2.IDP, without the secret. */
export function toIdpV2(provider: Provider): MessageInitShape<typeof IDPSchema> {
  const { details, config } = shared(provider);
  return {
    id: provider.id,
    details,
    state: provider.state === 'active' ? V2State.IDP_STATE_ACTIVE : V2State.IDP_STATE_INACTIVE,
    name: provider.name,
    type: provider.kind === 'oidc' ? V2Type.IDP_TYPE_OIDC : V2Type.IDP_TYPE_OAUTH,
    config: { options: v2Options(provider.options), config },
  };
}

/** zitadel.settings.v2.IdentityProvider. */
export function toActiveProvider(provider: Provider): MessageInitShape<typeof IdentityProviderSchema> {
  return {
    id: provider.id,
    name: provider.name,
    type: provider.kind === 'oidc' ? IdentityProviderType.OIDC : IdentityProviderType.OAUTH,
    options: v2Options(provider.options),
  };
}

/** zitadel.idp.v1.IDPLoginPolicyLink. */
export function toPolicyLink(link: PolicyIdp): MessageInitShape<typeof IDPLoginPolicyLinkSchema> {
  return { idpId: link.idpId, idpName: link.name, idpType: link.kind === 'oidc' ? IDPType.IDP_TYPE_OIDC : IDPType.IDP_TYPE_UNSPECIFIED };
}

/** v1 list details: the total, and when the list was read. */
export function listDetails(total: number): MessageInitShape<typeof ListDetailsSchema> {
  return { totalResult: BigInt(total), viewTimestamp: timestampFromDate(new Date()) };
}

/** One ProviderQuery of a ListProviders request (the management one adds the owner type). */
export type ProviderQueryCase =
  | { case: 'idpIdQuery'; value: { id: string } }
  | { case: 'idpNameQuery'; value: IDPNameQuery }
  | { case: 'ownerTypeQuery'; value: IDPOwnerTypeQuery }
  | { case: undefined; value?: undefined };

function matches(value: string, filter: ReturnType<typeof textFilter>): boolean {
  const left = filter.ignoreCase ? value.toLowerCase() : value;
  const right = filter.ignoreCase ? filter.value.toLowerCase() : filter.value;
  switch (filter.match) {
    case 'equals': return left === right;
    case 'startsWith': return left.startsWith(right);
    case 'contains': return left.includes(right);
    case 'endsWith': return left.endsWith(right);
  }
}

/**
 * The page of providers a ListProviders request asks for: every query must hold (ZITADEL ands
 * them). Always by name: proto3 cannot tell an `asc` left out from false.
 */
export function filterProviders(providers: Provider[], queries: { query: ProviderQueryCase }[], listQuery: ListQuery | undefined): { total: number; page: Provider[] } {
  const tests = queries.map(({ query }, i): ((p: Provider) => boolean) => {
    const field = `queries[${i}]`;
    switch (query.case) {
      case 'idpIdQuery': return (p) => p.id === query.value.id;
      case 'idpNameQuery': {
        const filter = textFilter(query.value.name, query.value.method, `${field}.idpNameQuery.name`);
        return (p) => matches(p.name, filter);
      }
      case 'ownerTypeQuery': {
        const wanted = query.value.ownerType;
        if (wanted !== IDPOwnerType.IDP_OWNER_TYPE_SYSTEM && wanted !== IDPOwnerType.IDP_OWNER_TYPE_ORG) throw invalidArgument(`${field}.ownerTypeQuery.ownerType`, 'must be IDP_OWNER_TYPE_SYSTEM or IDP_OWNER_TYPE_ORG');
        return (p) => (p.orgId === null ? IDPOwnerType.IDP_OWNER_TYPE_SYSTEM : IDPOwnerType.IDP_OWNER_TYPE_ORG) === wanted;
      }
      default: throw invalidArgument(field, 'names no query');
    }
  });
  const page = pageOf(listQuery, 'query');
  const all = providers.filter((p) => tests.every((test) => test(p)));
  return { total: all.length, page: all.slice(page.offset, page.offset + page.limit) };
}

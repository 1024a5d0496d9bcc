/** The shape every grant module has (CONTRIBUTING.md#where-a-change-goes): its type, the parameters it reads, and handle(). */
import type { IncomingMessage } from 'node:http';
import type { Gatehouse } from '../../context.ts';
import type { AuthenticatedClient } from '../client-auth/index.ts';
import type { Params } from '../../http/form.ts';
import type { AuthMethod } from '../../oidc/vocabulary.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'N_A';
  expires_in: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
  issued_token_type?: string;
}

export interface GrantContext {
  gh: Gatehouse;
  req: IncomingMessage;
  /** Only the parameters this grant declares (the first value of a repeatable one). */
  params: Params;
  /** Every value of the grant's repeatable parameters that came more than once. */
  lists: ReadonlyMap<string, readonly string[]>;
  /** Undefined for grants whose assertion authenticates the caller (JWT profile). */
  client: AuthenticatedClient | undefined;
  /** The token endpoint's URL: an accepted audience of assertions. */
  endpointUrl: string;
}

export interface Grant {
  grantType: string;
  /** The `grant` label of gatehouse_tokens_issued_total (short names for the URN grant types). */
  metricName: string;
  parameters: readonly string[];
  /** Parameters that may come more than once (RFC 8693 §2.1 audience, resource); others may not. */
  repeatable?: readonly string[];
  /**
   * Client authentication methods accepted (docs/endpoints.md#token-endpoint), or 'assertion' when the
   * grant's assertion authenticates.
   */
  clientAuth: readonly AuthMethod[] | 'assertion';
  /** Whether a machine user may be the client (client_credentials). */
  machines: boolean;
  /** Run-time switch (feature flags); absent means always on. */
  enabled?(gh: Gatehouse): Promise<boolean>;
  handle(ctx: GrantContext): Promise<TokenResponse>;
}

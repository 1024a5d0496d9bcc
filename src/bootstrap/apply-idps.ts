/**
 * Applies `identityProviders` and `loginPolicy.idps` (docs/bootstrap.md#identity-providers) through
 * the federation wing: each provider the file names is made as declared (matched by name among its
 * owner's; providers the file does not name are left alone), and a login policy's `idps`, when
 * given, is its whole list. The client secret is sealed with the master key, so a file with
 * providers needs one (GATEHOUSE_MASTER_KEY); re-applying compares the secret unsealed and changes
 * nothing when it is the same.
 */
import { declareLoginPolicyProviders, declareProvider, providerIdByReference, type IdpOwner } from '../domain/federation/providers.ts';
import { conflict, record, refusedAt, writer, type ApplyContext } from './apply-support.ts';
import type { IdentityProviderSpec, LoginPolicySpec } from './document.ts';

/** The owner's providers as the file declares them; true when anything changed. */
export async function applyProviders(ctx: ApplyContext, owner: IdpOwner, providers: IdentityProviderSpec[]): Promise<boolean> {
  let changed = false;
  for (const spec of providers) {
    const idp = ctx.idp;
    if (idp === undefined) conflict(ctx, spec.path, 'identity providers need the master key (GATEHOUSE_MASTER_KEY): their client secrets are stored encrypted');
    const result = await refusedAt(ctx, spec.path, async () => {
      // The secret is required for a new provider only; the wing says so in the API's words.
      return declareProvider(ctx.trx, writer(ctx), owner, spec.input, idp);
    });
    record(ctx, 'idp', spec.path, result.id, result.action);
    changed = changed || result.action !== 'unchanged';
  }
  return changed;
}

/** The login policy's list of providers, when the file gives `idps`; true when it changed. */
export async function applyPolicyProviders(ctx: ApplyContext, owner: IdpOwner, policy: LoginPolicySpec | undefined): Promise<boolean> {
  if (policy?.idps === undefined) return false;
  const ids: string[] = [];
  for (const [index, reference] of policy.idps.entries()) {
    ids.push(await refusedAt(ctx, `${policy.path}.idps[${index}]`, () => providerIdByReference(ctx.trx, owner, reference)));
  }
  return refusedAt(ctx, `${policy.path}.idps`, () => declareLoginPolicyProviders(ctx.trx, writer(ctx), owner, ids));
}

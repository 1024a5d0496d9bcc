/**
 * A user's accounts at external identity providers (docs/federation.md#links), as ZITADEL's "IdP
 * links" (user.v2 AddIDPLink, ListIDPLinks, RemoveIDPLink): the one writer of `idp_links` and of
 * the `user.human.externalidp.*` events.
 *
 * - Only human users have links; the provider must be one the user's organization may use (its
 *   own, or the instance's): another organization's provider is NotFound, as if it did not exist.
 * - An account at a provider belongs to one user: linking it a second time is AlreadyExists.
 * - A link is not removed when it is the user's last way to sign in (no password, no passkey, no
 *   other link): FailedPrecondition, so that nobody locks a user out by accident.
 */
import type { DB } from '../../store/database.ts';
import { countReadyPasskeys } from '../../store/passkeys.ts';
import { countUserIdpLinks, deleteIdpLink, insertIdpLink, listUserIdpLinks, type IdpLinkRow } from '../../store/idp-links.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { Refusal } from '../kernel/refusals.ts';
import { holdUser } from '../users/row-lock.ts';
import { usableProvider } from './providers.ts';

/** The user a link belongs to, as the caller loaded it (after its permission check). */
export interface LinkedUser {
  id: string;
  instanceId: string;
  orgId: string;
  kind: 'human' | 'machine';
  /** Whether the user has a password. */
  hasPassword: boolean;
}

export interface IdpLink {
  idpId: string;
  /** The user's id at the provider. */
  externalUserId: string;
  /** The user's name at the provider. */
  externalUserName: string;
  createdAt: Date;
}

/** ZITADEL's limits on IDPLink's fields (user/v2/idp.proto: 1–200 each). */
const MAX_FIELD = 200;

function checkField(value: string, field: string): string {
  if (value.trim() === '') throw new Refusal('invalid', 'USER-IdpLinkInvalid', 'must not be empty', { field });
  if (value.length > MAX_FIELD) throw new Refusal('invalid', 'USER-IdpLinkInvalid', `must be at most ${MAX_FIELD} characters`, { field });
  return value;
}

function linkOf(row: IdpLinkRow): IdpLink {
  return { idpId: row.idp_id, externalUserId: row.external_user_id, externalUserName: row.external_user_name, createdAt: row.created_at };
}

/**
 * Links the account `externalUserId` at provider `idpId` to the user. `fieldPrefix` names the
 * request's message in refusals (`idpLink.` for AddIDPLink).
 */
export async function addLink(
  trx: DB,
  creator: string,
  user: LinkedUser,
  link: { idpId: string; externalUserId: string; externalUserName: string },
  fieldPrefix = '',
): Promise<ChangeDetails> {
  const idpId = checkField(link.idpId, `${fieldPrefix}idpId`);
  const externalUserId = checkField(link.externalUserId, `${fieldPrefix}userId`);
  const externalUserName = checkField(link.externalUserName, `${fieldPrefix}userName`);
  if (user.kind !== 'human') throw new Refusal('conflict', 'USER-IdpLinkMachine', 'machine users do not sign in at identity providers');
  try {
    await usableProvider(trx, { instanceId: user.instanceId, orgId: user.orgId }, idpId);
  } catch (error) {
    if (error instanceof Refusal) throw new Refusal('not_found', 'IDP-NotFound', "no identity provider of the user's organization or of the instance has this id", { field: `${fieldPrefix}idpId` });
    throw error;
  }
  const added = await insertIdpLink(trx, { instance_id: user.instanceId, idp_id: idpId, user_id: user.id, external_user_id: externalUserId, external_user_name: externalUserName });
  if (!added) throw new Refusal('exists', 'USER-IdpLinkExists', 'this account at the identity provider is linked to a user already');
  return appendEvent(trx, {
    instanceId: user.instanceId, aggregateId: user.id, resourceOwner: user.orgId, creator, type: 'user.human.externalidp.added', payload: { idpId, externalUserId },
  });
}

/** A page of the user's links, oldest first unless `asc` is false, and how many there are. */
export async function listLinks(db: DB, userId: string, page: { offset: number; limit: number; asc: boolean }): Promise<{ links: IdpLink[]; total: number }> {
  const { rows, total } = await listUserIdpLinks(db, userId, page);
  return { links: rows.map(linkOf), total };
}

/** Removes a link of the user; NotFound when it has none such, FailedPrecondition when it is its last way to sign in. */
export async function removeLink(trx: DB, creator: string, user: LinkedUser, idpId: string, externalUserId: string): Promise<ChangeDetails> {
  if (idpId === '') throw new Refusal('invalid', 'USER-IdpLinkInvalid', 'must not be empty', { field: 'idpId' });
  if (externalUserId === '') throw new Refusal('invalid', 'USER-IdpLinkInvalid', 'must not be empty', { field: 'linkedUserId' });
  // One removal at a time per user: two removals of its last two links must not both pass the check.
  await holdUser(trx, user.id);
  const links = await countUserIdpLinks(trx, user.id);
  if (!user.hasPassword && links <= 1 && (await countReadyPasskeys(trx, user.id)) === 0) {
    const exists = (await listUserIdpLinks(trx, user.id, { offset: 0, limit: 0, asc: true })).rows.some((row) => row.idp_id === idpId && row.external_user_id === externalUserId);
    if (exists) {
      throw new Refusal('conflict', 'USER-IdpLinkLast', "this link is the user's only way to sign in (no password, no passkey, no other link): add a password or a passkey first");
    }
  }
  if (!(await deleteIdpLink(trx, user.id, idpId, externalUserId))) throw new Refusal('not_found', 'USER-IdpLinkNotFound', 'the user has no such link');
  return appendEvent(trx, {
    instanceId: user.instanceId, aggregateId: user.id, resourceOwner: user.orgId, creator, type: 'user.human.externalidp.removed', payload: { idpId, externalUserId },
  });
}

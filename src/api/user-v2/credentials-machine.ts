/**
 * zitadel.user.v2 AddKey, ListKeys, RemoveKey, AddSecret and RemoveSecret: a machine user's
 * credentials (docs/decisions.md#machine-credentials). Only administrators manage them (machine users
 * have no self-service; an administrator acting on its own machine user is still its administrator);
 * a human user is FailedPrecondition.
 *
 * - AddKey stores a supplied PEM public key (RSA of at least 2048 bits, EC or Ed25519; anything else
 *   InvalidArgument naming `publicKey`), or generates an RSA pair and returns ZITADEL's key file in
 *   `keyContent` once; only the public half is kept. `expirationDate` is optional (no expiry).
 * - AddSecret returns a new secret once (replacing any previous one) and keeps its argon2id hash; the
 *   client id for client_credentials is the user name.
 * - A removed key or secret stops authenticating at once: the directory that caches machine users is
 *   cleared after the commit (other processes follow the change feed).
 * - ListKeys lists what the caller manages: an ORG_OWNER sees keys of its organizations' machine
 *   users, except users holding an instance-wide role (docs/security.md 10.13); filters combine
 *   with and.
 */
import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { TimestampFilterMethod, type IDFilter, type TimestampFilter } from '../../../gen/zitadel/filter/v2/filter_pb.js';
import { KeyFieldName, type KeysSearchFilter } from '../../../gen/zitadel/user/v2/key_pb.js';
import type { UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { hashSecret } from '../../domain/kernel/crypto.ts';
import { newId } from '../../domain/kernel/ids.ts';
import {
  addMachineKey,
  machineKeyFile,
  newMachineSecret,
  newRsaKeyPair,
  parsePublicKey,
  removeMachineKey,
  removeMachineSecret,
  setMachineSecret,
  type MachineChange,
} from '../../domain/credentials/machine-credentials.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import type { CredentialTable, KeyFilter, KeySortColumn, TimeComparison } from '../../store/credentials.ts';
import { listMachineCredentialsPage } from '../../store/credentials.ts';
import type { DB } from '../../store/database.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { listFilter, requireManager } from '../management/access.ts';
import { pageOf } from '../management/lists.ts';
import { fieldError, requireMachine } from './credentials-common.ts';
import { targetUser } from './target.ts';

type MachineMethods = Pick<ServiceImpl<typeof UserService>, 'addKey' | 'listKeys' | 'removeKey' | 'addSecret' | 'removeSecret'>;

/** Keys expire before this (ZITADEL's key files write 9999-12-31 for "never"). */
const LATEST_EXPIRY = Date.UTC(10000, 0, 1);
const MAX_FILTERS = 100;
const MAX_ID_LENGTH = 200;

const COMPARISONS: Partial<Record<TimestampFilterMethod, TimeComparison>> = {
  [TimestampFilterMethod.EQUALS]: '=',
  [TimestampFilterMethod.AFTER]: '>',
  [TimestampFilterMethod.AFTER_OR_EQUALS]: '>=',
  [TimestampFilterMethod.BEFORE]: '<',
  [TimestampFilterMethod.BEFORE_OR_EQUALS]: '<=',
};

const SORT_COLUMNS: Partial<Record<KeyFieldName, KeySortColumn>> = {
  [KeyFieldName.UNSPECIFIED]: 'createdAt',
  [KeyFieldName.CREATED_DATE]: 'createdAt',
  [KeyFieldName.ID]: 'id',
  [KeyFieldName.USER_ID]: 'userId',
  [KeyFieldName.ORGANIZATION_ID]: 'orgId',
  [KeyFieldName.KEY_EXPIRATION_DATE]: 'expiresAt',
};

/** A timestamp of the request as a date; InvalidArgument when it names no representable time. */
export function dateOf(timestamp: Timestamp, field: string): Date {
  const date = timestampDate(timestamp);
  if (Number.isNaN(date.getTime()) || date.getTime() >= LATEST_EXPIRY) throw fieldError(field, 'is out of range');
  return date;
}

function idOf(filter: IDFilter, field: string): string {
  if (filter.id.length > MAX_ID_LENGTH) throw fieldError(`${field}.id`, `must be at most ${MAX_ID_LENGTH} characters`);
  return filter.id;
}

function timeOf(filter: TimestampFilter, field: string): { op: TimeComparison; at: Date } {
  if (filter.timestamp === undefined) throw fieldError(`${field}.timestamp`, 'is required');
  const op = COMPARISONS[filter.method];
  if (op === undefined) throw fieldError(`${field}.method`, 'unknown timestamp filter method');
  return { op, at: dateOf(filter.timestamp, `${field}.timestamp`) };
}

/**
 * One filter of ListKeys, or of ListPersonalAccessTokens (whose oneof differs only in the id filter's
 * name, `idField`, which the error messages name).
 */
export function keyFilter(oneof: KeysSearchFilter['filter'], at: string, idField = 'keyIdFilter'): KeyFilter {
  const { case: kind, value } = oneof;
  switch (kind) {
    case 'keyIdFilter':
      return { kind: 'keyId', id: idOf(value, `${at}.${idField}`) };
    case 'userIdFilter':
      return { kind: 'userId', id: idOf(value, `${at}.userIdFilter`) };
    case 'organizationIdFilter':
      return { kind: 'orgId', id: idOf(value, `${at}.organizationIdFilter`) };
    case 'createdDateFilter':
      return { kind: 'createdAt', ...timeOf(value, `${at}.createdDateFilter`) };
    case 'expirationDateFilter':
      return { kind: 'expiresAt', ...timeOf(value, `${at}.expirationDateFilter`) };
    case undefined:
      throw fieldError(at, 'names no filter');
  }
}

/** The machine user a call names, for an administrator of it. */
export async function machineTargetOf(gh: Gatehouse, db: DB, principal: Principal, userId: string): Promise<MachineChange> {
  const target = await targetUser(db, gh.instanceId, principal, userId, { allowSelf: false });
  requireMachine(target.row);
  return { userId: target.row.id, instanceId: target.row.instance_id, orgId: target.row.org_id, creator: creatorOf(principal) };
}

/**
 * One page of a machine credential table the caller manages (ListKeys, ListPersonalAccessTokens): an
 * ORG_OWNER sees its organizations' machine users' only, except users holding an instance-wide role.
 * Both answers have the same fields (zitadel.user.v2 Key and PersonalAccessToken).
 */
export async function machineCredentialsPage(
  gh: Gatehouse,
  principal: Principal,
  table: CredentialTable,
  query: { filters: KeyFilter[]; sortBy: KeySortColumn; pagination: Parameters<typeof pageOf>[0] },
) {
  const managed = requireManager(principal);
  const page = pageOf(query.pagination);
  const { rows, total } = await listMachineCredentialsPage(gh.db, table, {
    instanceId: gh.instanceId,
    orgIds: listFilter(managed),
    rolesWithin: listFilter(managed),
    filters: query.filters,
    sortBy: query.sortBy,
    page,
  });
  return {
    pagination: { totalResult: BigInt(total), appliedLimit: BigInt(page.limit) },
    result: rows.map((row) => ({
      id: row.id,
      userId: row.user_id,
      organizationId: row.org_id,
      creationDate: timestampFromDate(row.created_at),
      changeDate: timestampFromDate(row.created_at),
      ...(row.expires_at === null ? {} : { expirationDate: timestampFromDate(row.expires_at) }),
    })),
  };
}

export function machineMethods(gh: Gatehouse): MachineMethods {
  const machineTarget = (db: DB, principal: Principal, userId: string) => machineTargetOf(gh, db, principal, userId);

  return {
    async addKey(req, ctx) {
      const principal = requirePrincipal(ctx);
      const expiresAt = req.expirationDate === undefined ? null : dateOf(req.expirationDate, 'expirationDate');
      if (expiresAt !== null && expiresAt.getTime() <= Date.now()) throw fieldError('expirationDate', 'must lie in the future');
      const supplied = req.publicKey.length > 0 ? parsePublicKey(req.publicKey) : undefined;
      if (supplied !== undefined && 'problem' in supplied) throw fieldError('publicKey', supplied.problem);
      // The permission first: a key pair costs tens of milliseconds to generate.
      const change = await machineTarget(gh.db, principal, req.userId);
      const key: { publicPem: string; privatePem?: string } = supplied === undefined ? await newRsaKeyPair() : { publicPem: supplied.pem };
      const keyId = newId();
      const generated = key.privatePem !== undefined;
      const details = await gh.db.transaction().execute((trx) => addMachineKey(trx, change, { keyId, publicPem: key.publicPem, expiresAt, generated }));
      gh.directory.clear();
      // The private key leaves once, in the key file; only the public key is kept.
      const keyContent = key.privatePem === undefined ? new Uint8Array() : new TextEncoder().encode(machineKeyFile({ keyId, privatePem: key.privatePem, userId: change.userId, expiresAt }));
      return { creationDate: timestampFromDate(details.changeDate), keyId, keyContent };
    },

    async removeKey(req, ctx) {
      const principal = requirePrincipal(ctx);
      if (req.keyId === '') throw fieldError('keyId', 'is required');
      const details = await gh.db.transaction().execute(async (trx) => {
        const change = await machineTarget(trx, principal, req.userId);
        const removed = await removeMachineKey(trx, change, req.keyId);
        if (removed === undefined) throw apiError(Code.NotFound, 'USER-KeyNotFound', 'key not found');
        return removed;
      });
      gh.directory.clear();
      return { deletionDate: timestampFromDate(details.changeDate) };
    },

    async listKeys(req, ctx) {
      if (req.filters.length > MAX_FILTERS) throw fieldError('filters', `must be at most ${MAX_FILTERS}`);
      const filters = req.filters.map((filter, i) => keyFilter(filter.filter, `filters[${i}]`));
      const sortBy = SORT_COLUMNS[req.sortingColumn ?? KeyFieldName.UNSPECIFIED];
      if (sortBy === undefined) throw fieldError('sortingColumn', 'unknown key field');
      return machineCredentialsPage(gh, requirePrincipal(ctx), 'machine_keys', { filters, sortBy, pagination: req.pagination });
    },

    async addSecret(req, ctx) {
      const principal = requirePrincipal(ctx);
      const change = await machineTarget(gh.db, principal, req.userId);
      const clientSecret = newMachineSecret();
      const secretHash = await hashSecret(clientSecret);
      const details = await gh.db.transaction().execute((trx) => setMachineSecret(trx, change, secretHash));
      gh.directory.clear();
      return { creationDate: timestampFromDate(details.changeDate), clientSecret };
    },

    async removeSecret(req, ctx) {
      const principal = requirePrincipal(ctx);
      const details = await gh.db.transaction().execute(async (trx) => {
        const change = await machineTarget(trx, principal, req.userId);
        const removed = await removeMachineSecret(trx, change);
        if (removed === undefined) throw apiError(Code.NotFound, 'USER-SecretNotFound', 'the machine user has no secret');
        return removed;
      });
      gh.directory.clear();
      return { deletionDate: timestampFromDate(details.changeDate) };
    },
  };
}

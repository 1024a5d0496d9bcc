/**
 * zitadel.app.v2beta.AppService: the keys an application signs its client assertions with
 * (private_key_jwt, docs/management-api.md#the-identity-model). CreateApplicationKey generates an RSA
 * key pair, stores the public key and returns ZITADEL's key file
 * `{"type":"application","keyId","key","appId","clientId"}` once, its `key` a PKCS#1 PEM as ZITADEL's
 * SDKs read it (cli/machine-key.ts makes machine key files alike). A deleted key no longer
 * authenticates from the next request on.
 */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { ApplicationKeysSorting } from '../../../gen/zitadel/app/v2beta/app_pb.js';
import type { AppService, ListApplicationKeysRequest } from '../../../gen/zitadel/app/v2beta/app_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { newId } from '../../domain/kernel/ids.ts';
import { addAppKey, removeAppKey, requireKeyMethod } from '../../domain/projects/app-admin.ts';
import { actorOf } from '../../domain/projects/project-admin.ts';
import { findAppKeyWithApp, listAppKeysPage, type AppKeyListQuery, type AppKeySortColumn } from '../../store/apps.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { listFilter, requireManager, requireOrg } from '../management/access.ts';
import { invalidArgument, pageOf } from '../management/lists.ts';
import { keyNotFound, missing, optionalId, requiredId, targetApp } from './target.ts';
import { applicationKeyOf } from './views.ts';

const generateRsaKeyPair = promisify(generateKeyPair);

/** ZITADEL's application key file. */
interface ApplicationKeyFile {
  type: 'application';
  keyId: string;
  /** The private key, PEM (PKCS#1). */
  key: string;
  appId: string;
  clientId: string;
}

const SORT_COLUMNS: ReadonlyMap<ApplicationKeysSorting, AppKeySortColumn> = new Map([
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_ID, 'app_keys.id'],
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_PROJECT_ID, 'apps.project_id'],
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_APPLICATION_ID, 'app_keys.app_id'],
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_CREATION_DATE, 'app_keys.created_at'],
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_ORGANIZATION_ID, 'apps.org_id'],
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_EXPIRATION, 'app_keys.expires_at'],
  // Every application key is a JSON key pair: by type is by id.
  [ApplicationKeysSorting.APPLICATION_KEYS_SORT_BY_TYPE, 'app_keys.id'],
]);

/** Whose keys the request lists. */
function ownerOf(resource: ListApplicationKeysRequest['resourceId']): Pick<AppKeyListQuery, 'appId' | 'projectId' | 'orgId'> {
  const none = { appId: undefined, projectId: undefined, orgId: undefined };
  switch (resource.case) {
    case 'applicationId':
      return { ...none, appId: requiredId(resource.value, 'applicationId') };
    case 'projectId':
      return { ...none, projectId: requiredId(resource.value, 'projectId') };
    case 'organizationId':
      return { ...none, orgId: requiredId(resource.value, 'organizationId') };
    case undefined:
      return none;
  }
}

export function keyMethods(gh: Gatehouse): Partial<ServiceImpl<typeof AppService>> {
  return {
    async createApplicationKey(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const expiresAt = req.expirationDate === undefined ? null : timestampDate(req.expirationDate);
      if (expiresAt !== null && !(expiresAt.getTime() > Date.now())) throw invalidArgument('expirationDate', 'must lie in the future');
      const target = { appId: req.appId, field: 'appId', projectId: req.projectId };
      requireKeyMethod(await targetApp(gh.db, gh.instanceId, managed, target));
      const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      });
      const keyId = newId();
      const { row, change } = await gh.db.transaction().execute(async (trx) => {
        const app = await targetApp(trx, gh.instanceId, managed, { ...target, lock: true });
        const added = await addAppKey(trx, actorOf(gh.instanceId, principal), app, { keyId, publicKey, expiresAt });
        return { row: app, change: added };
      });
      gh.directory.clear();
      const file: ApplicationKeyFile = { type: 'application', keyId, key: privateKey, appId: row.id, clientId: row.client_id };
      return { id: keyId, creationDate: timestampFromDate(change.changeDate), keyDetails: new TextEncoder().encode(JSON.stringify(file)) };
    },

    async deleteApplicationKey(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const keyId = requiredId(req.id, 'id');
      // The other ids are optional checks: a key outside them is not found.
      const expected = {
        project: optionalId(req.projectId, 'projectId'),
        app: optionalId(req.applicationId, 'applicationId'),
        org: optionalId(req.organizationId, 'organizationId'),
      };
      const change = await gh.db.transaction().execute(async (trx) => {
        const key = await findAppKeyWithApp(trx, keyId);
        if (key === undefined || key.instance_id !== gh.instanceId) throw missing(managed, 'application key', 'APP-KeyNotFound');
        requireOrg(managed, key.org_id);
        const outside =
          (expected.project !== undefined && expected.project !== key.project_id) ||
          (expected.app !== undefined && expected.app !== key.app_id) ||
          (expected.org !== undefined && expected.org !== key.org_id);
        if (outside) throw keyNotFound();
        return removeAppKey(trx, actorOf(gh.instanceId, principal), key);
      });
      gh.directory.clear();
      return { deletionDate: timestampFromDate(change.changeDate) };
    },

    async listApplicationKeys(req, ctx) {
      const managed = requireManager(requirePrincipal(ctx));
      const page = pageOf(req.pagination);
      const sort = SORT_COLUMNS.get(req.sortingColumn);
      if (sort === undefined) throw invalidArgument('sortingColumn', `unknown value ${req.sortingColumn}`);
      const { rows, total } = await listAppKeysPage(gh.db, {
        instanceId: gh.instanceId,
        orgIds: listFilter(managed),
        ...ownerOf(req.resourceId),
        sort,
        page,
      });
      return { keys: rows.map(applicationKeyOf), pagination: { totalResult: BigInt(total), appliedLimit: BigInt(page.limit) } };
    },
  };
}

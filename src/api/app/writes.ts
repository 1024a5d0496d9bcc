/**
 * zitadel.app.v2beta.AppService: creating, changing and deleting applications and replacing their
 * secrets (docs/management-api.md).
 *
 * - A client secret is generated for the methods that use one (client_secret_basic, _post), returned
 *   once and stored as a hash; none and private_key_jwt have no secret.
 * - Every change appends one event (aggregate `app`) naming its creator; after the commit this
 *   process's caches are cleared at once (other processes follow the change feed), so a deleted
 *   application or a replaced secret is `invalid_client` at the next request.
 * - Secrets are hashed before the transaction opens, so no row stays locked while argon2 runs.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import type { AppService, UpdateApplicationRequest } from '../../../gen/zitadel/app/v2beta/app_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { newClientSecret, usesSecret } from '../../domain/projects/applications.ts';
import { addApp, changeApp, changeAppSecret, checkAppIdFree, removeApp, requireSecretMethod } from '../../domain/projects/app-admin.ts';
import { actorOf } from '../../domain/projects/project-admin.ts';
import { hashSecret } from '../../domain/kernel/crypto.ts';
import { idProblem, nameProblem } from '../../domain/kernel/names.ts';
import type { AppRow } from '../../store/schema.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { requireManager } from '../management/access.ts';
import { invalidArgument } from '../management/lists.ts';
import { apiSettingsOf, oidcSettingsOf, settingsOfRow, updatedOidcSettings, type AppSettings } from './settings.ts';
import { targetApp, targetProject } from './target.ts';

function checkedName(name: string): string {
  const problem = nameProblem(name);
  if (problem !== undefined) throw invalidArgument('name', problem);
  return name;
}

/** A secret and its hash when the method uses one. */
async function secretFor(settings: Pick<AppSettings, 'auth_method'>): Promise<{ secret: string; hash: string } | undefined> {
  if (!usesSecret(settings.auth_method)) return undefined;
  const secret = newClientSecret();
  return { secret, hash: await hashSecret(secret) };
}

/** The settings the update asks for; InvalidArgument when they are for the other kind of application. */
function requestedSettings(row: AppRow, update: UpdateApplicationRequest['updateRequestType']): AppSettings {
  const current = settingsOfRow(row);
  switch (update.case) {
    case undefined:
      return current;
    case 'oidcConfigurationRequest':
      if (row.kind !== 'oidc') throw invalidArgument('oidcConfigurationRequest', 'the application is an API application (use apiConfigurationRequest)');
      return updatedOidcSettings(current, update.value);
    case 'apiConfigurationRequest':
      if (row.kind !== 'api') throw invalidArgument('apiConfigurationRequest', 'the application is an OIDC application (use oidcConfigurationRequest)');
      return apiSettingsOf(update.value);
  }
}

export function writeMethods(gh: Gatehouse): Partial<ServiceImpl<typeof AppService>> {
  return {
    async createApplication(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const name = checkedName(req.name);
      const idIssue = req.id === '' ? undefined : idProblem(req.id);
      if (idIssue !== undefined) throw invalidArgument('id', idIssue);
      const kind = req.creationRequestType;
      if (kind.case === undefined) throw invalidArgument('oidcRequest', 'oidcRequest or apiRequest is required');
      const settings = kind.case === 'oidcRequest' ? oidcSettingsOf(kind.value) : apiSettingsOf(kind.value);
      // The permission first: a caller who may not create here costs no hash.
      await targetProject(gh.db, gh.instanceId, managed, req.projectId);
      // A taken id costs no hash either; the claim in the transaction decides.
      if (req.id !== '') await checkAppIdFree(gh.db, gh.instanceId, req.id);
      const secret = await secretFor(settings);

      const created = await gh.db.transaction().execute(async (trx) => {
        const project = await targetProject(trx, gh.instanceId, managed, req.projectId);
        return addApp(trx, actorOf(gh.instanceId, principal), project, {
          id: req.id === '' ? undefined : req.id,
          name,
          settings,
          secretHash: secret?.hash ?? null,
        });
      });
      gh.directory.clear();

      const credentials = { clientId: created.clientId, clientSecret: secret?.secret ?? '' };
      return {
        appId: created.id,
        creationDate: timestampFromDate(created.details.changeDate),
        creationResponseType:
          settings.kind === 'oidc' ? { case: 'oidcResponse', value: credentials } : { case: 'apiResponse', value: credentials },
      };
    },

    async updateApplication(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      // docs/management-api.md#services-and-calls: an empty name keeps the name.
      const name = req.name === '' ? undefined : checkedName(req.name);
      const changeDate = await gh.db.transaction().execute(async (trx) => {
        const row = await targetApp(trx, gh.instanceId, managed, { appId: req.id, field: 'id', projectId: req.projectId, lock: true });
        // A method without a secret keeps none (the wing drops it); one that needs one gets it from RegenerateClientSecret.
        const settings = requestedSettings(row, req.updateRequestType);
        const { details } = await changeApp(trx, actorOf(gh.instanceId, principal), row, { name, settings });
        return details?.changeDate ?? row.changed_at;
      });
      gh.directory.clear();
      return { changeDate: timestampFromDate(changeDate) };
    },

    async deleteApplication(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const change = await gh.db.transaction().execute(async (trx) => {
        const row = await targetApp(trx, gh.instanceId, managed, { appId: req.id, field: 'id', projectId: req.projectId, lock: true });
        return removeApp(trx, actorOf(gh.instanceId, principal), row);
      });
      gh.directory.clear();
      return { deletionDate: timestampFromDate(change.changeDate) };
    },

    async regenerateClientSecret(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const target = { appId: req.applicationId, field: 'applicationId', projectId: req.projectId };
      const check = (row: AppRow): void => {
        const claimed = req.appType.case === 'isOidc' ? 'oidc' : req.appType.case === 'isApi' ? 'api' : undefined;
        if (claimed !== undefined && claimed !== row.kind) {
          throw invalidArgument(req.appType.case!, `the application is an ${row.kind === 'api' ? 'API' : 'OIDC'} application`);
        }
        requireSecretMethod(row);
      };
      check(await targetApp(gh.db, gh.instanceId, managed, target));
      const secret = newClientSecret();
      const hash = await hashSecret(secret);
      const change = await gh.db.transaction().execute(async (trx) => {
        const row = await targetApp(trx, gh.instanceId, managed, { ...target, lock: true });
        check(row);
        return changeAppSecret(trx, actorOf(gh.instanceId, principal), row, hash);
      });
      gh.directory.clear();
      return { clientSecret: secret, creationDate: timestampFromDate(change.changeDate) };
    },
  };
}

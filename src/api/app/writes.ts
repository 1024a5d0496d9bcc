/**
 * zitadel.app.v2beta.AppService: creating, changing and deleting applications and replacing their
 * secrets (SPEC §5, §12).
 *
 * - A client secret is generated for the methods that use one (client_secret_basic, _post), returned
 *   once and stored as a hash; none and private_key_jwt have no secret.
 * - Every change appends one event (aggregate `app`) naming its creator; after the commit this
 *   process's caches are cleared at once (other processes follow the change feed), so a deleted
 *   application or a replaced secret is `invalid_client` at the next request.
 * - Secrets are hashed before the transaction opens, so no row stays locked while argon2 runs.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import type { AppService, UpdateApplicationRequest } from '../../../gen/zitadel/app/v2beta/app_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { clientIdFor, newClientSecret, usesSecret } from '../../domain/projects/applications.ts';
import { hashSecret } from '../../domain/kernel/crypto.ts';
import { claimNewIdentifiers, identifierTaken } from '../../domain/kernel/identifiers.ts';
import { newId } from '../../domain/kernel/ids.ts';
import { idProblem, nameProblem } from '../../domain/kernel/names.ts';
import { deleteApp, findOtherAppNamed, insertApp, updateApp } from '../../store/apps.ts';
import type { AppRow } from '../../store/schema.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { requireManager } from '../management/access.ts';
import { invalidArgument } from '../management/lists.ts';
import { appEvent, asConflict, idTaken, nameTaken } from './changes.ts';
import { apiSettingsOf, changedSettings, oidcSettingsOf, settingsOfRow, updatedOidcSettings, type AppSettings } from './settings.ts';
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
      const appId = req.id === '' ? newId() : req.id;
      // A taken id costs no hash either; the claim in the transaction decides.
      if (req.id !== '' && (await identifierTaken(gh.db, gh.instanceId, appId))) throw idTaken();
      const secret = await secretFor(settings);

      const created = await gh.db
        .transaction()
        .execute(async (trx) => {
          const project = await targetProject(trx, gh.instanceId, managed, req.projectId);
          if (await findOtherAppNamed(trx, project.id, name, undefined)) throw nameTaken();
          const clientId = clientIdFor(appId, project.name);
          await claimNewIdentifiers(trx, gh.instanceId, { type: 'app', id: appId }, [appId, clientId]);
          await insertApp(trx, {
            ...settings,
            id: appId,
            instance_id: gh.instanceId,
            org_id: project.org_id,
            project_id: project.id,
            name,
            client_id: clientId,
            secret_hash: secret?.hash ?? null,
          });
          const change = await appEvent(trx, principal, { id: appId, org_id: project.org_id }, 'app.added', {
            name,
            clientId,
            projectId: project.id,
            kind: settings.kind,
          });
          return { clientId, change };
        })
        .catch((error: unknown) => {
          throw asConflict(error);
        });
      gh.directory.clear();

      const credentials = { clientId: created.clientId, clientSecret: secret?.secret ?? '' };
      return {
        appId,
        creationDate: timestampFromDate(created.change.changeDate),
        creationResponseType:
          settings.kind === 'oidc' ? { case: 'oidcResponse', value: credentials } : { case: 'apiResponse', value: credentials },
      };
    },

    async updateApplication(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      // SPEC §12: an empty name keeps the name.
      const name = req.name === '' ? undefined : checkedName(req.name);
      const changeDate = await gh.db
        .transaction()
        .execute(async (trx) => {
          const row = await targetApp(trx, gh.instanceId, managed, { appId: req.id, field: 'id', projectId: req.projectId, lock: true });
          const before = settingsOfRow(row);
          const after = requestedSettings(row, req.updateRequestType);
          const changes: Partial<AppSettings> & { name?: string; secret_hash?: null } = changedSettings(before, after);
          if (name !== undefined && name !== row.name) {
            if (await findOtherAppNamed(trx, row.project_id, name, row.id)) throw nameTaken();
            changes.name = name;
          }
          // A method without a secret keeps none; one that needs a secret gets it from RegenerateClientSecret.
          if (!usesSecret(after.auth_method) && row.secret_hash !== null) changes.secret_hash = null;
          const changed = Object.keys(changes);
          if (changed.length === 0) return row.changed_at;
          await updateApp(trx, row.id, changes);
          const change = await appEvent(trx, principal, row, 'app.changed', { changed });
          return change.changeDate;
        })
        .catch((error: unknown) => {
          throw asConflict(error);
        });
      gh.directory.clear();
      return { changeDate: timestampFromDate(changeDate) };
    },

    async deleteApplication(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const change = await gh.db.transaction().execute(async (trx) => {
        const row = await targetApp(trx, gh.instanceId, managed, { appId: req.id, field: 'id', projectId: req.projectId, lock: true });
        await deleteApp(trx, row.id);
        return appEvent(trx, principal, row, 'app.removed', { name: row.name, clientId: row.client_id, projectId: row.project_id });
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
        if (!usesSecret(row.auth_method)) {
          throw apiError(Code.FailedPrecondition, 'APP-NoSecret', `the application authenticates with ${row.auth_method}, which uses no client secret`);
        }
      };
      check(await targetApp(gh.db, gh.instanceId, managed, target));
      const secret = newClientSecret();
      const hash = await hashSecret(secret);
      const change = await gh.db.transaction().execute(async (trx) => {
        const row = await targetApp(trx, gh.instanceId, managed, { ...target, lock: true });
        check(row);
        await updateApp(trx, row.id, { secret_hash: hash });
        return appEvent(trx, principal, row, 'app.secret.changed', {});
      });
      gh.directory.clear();
      return { clientSecret: secret, creationDate: timestampFromDate(change.changeDate) };
    },
  };
}

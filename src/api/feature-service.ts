/**
 * zitadel.feature.v2.FeatureService: the instance features (docs/endpoints.md#featureservice). Every
 * call needs the IAM_OWNER role (scopes are checked by the auth interceptor).
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import { Source, type FeatureFlag, FeatureFlagSchema } from '../../gen/zitadel/feature/v2/feature_pb.js';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import type { DetailsSchema } from '../../gen/zitadel/object/v2/object_pb.js';
import type { ChangeDetails } from '../domain/kernel/events.ts';
import { featureDetails, getFeatures, resetFeatures, setFeatures, type FeatureName, type FeatureState } from '../domain/instance/features.ts';
import { creatorOf, hasRole, type Principal } from '../domain/kernel/principal.ts';
import type { DB } from '../store/database.ts';
import { requirePrincipal } from './auth-interceptor.ts';
import { apiError } from './errors.ts';

export interface FeatureServiceDeps {
  db: DB;
  instanceId: () => string;
  /** Tells this process at once that instance settings changed (other processes see the event). */
  changed?: () => void;
}

export function createFeatureService(deps: FeatureServiceDeps): ServiceImpl<typeof FeatureService> {
  return {
    async setInstanceFeatures(req, ctx) {
      const principal = requireIamOwner(ctx);
      const changes: Partial<Record<FeatureName, boolean>> = {};
      if (req.oidcTokenExchange !== undefined) changes.oidcTokenExchange = req.oidcTokenExchange;
      if (Object.keys(changes).length === 0) throw apiError(Code.InvalidArgument, 'FEAT-NoChanges', 'no feature to set');
      const details = await setFeatures(deps.db, deps.instanceId(), changes, creatorOf(principal));
      deps.changed?.();
      return { details: toDetails(details) };
    },

    async resetInstanceFeatures(_req, ctx) {
      const principal = requireIamOwner(ctx);
      const details = await resetFeatures(deps.db, deps.instanceId(), creatorOf(principal));
      deps.changed?.();
      return { details: toDetails(details) };
    },

    async getInstanceFeatures(req, ctx) {
      requireIamOwner(ctx);
      const instanceId = deps.instanceId();
      const [features, details] = await Promise.all([getFeatures(deps.db, instanceId), featureDetails(deps.db, instanceId).then((details) => details ?? notFound())]);
      return {
        details: toDetails(details),
        oidcTokenExchange: toFlag(features.oidcTokenExchange, req.inheritance),
      };
    },
  };
}

function requireIamOwner(ctx: HandlerContext): Principal {
  const principal = requirePrincipal(ctx);
  if (!hasRole(principal, 'IAM_OWNER')) throw apiError(Code.PermissionDenied, 'FEAT-Permission', 'IAM_OWNER role required');
  return principal;
}

/**
 * Without `inheritance`, a feature not set on the instance is reported as ZITADEL does: disabled,
 * source SOURCE_UNSPECIFIED. With it, the system default shows with source SOURCE_SYSTEM.
 */
function toFlag(state: FeatureState, inheritance: boolean): FeatureFlag {
  if (state.source === 'instance') return create(FeatureFlagSchema, { enabled: state.enabled, source: Source.INSTANCE });
  if (!inheritance) return create(FeatureFlagSchema, { enabled: false, source: Source.UNSPECIFIED });
  return create(FeatureFlagSchema, { enabled: state.enabled, source: Source.SYSTEM });
}

function toDetails(details: ChangeDetails): MessageInitShape<typeof DetailsSchema> {
  return {
    sequence: BigInt(details.sequence),
    changeDate: timestampFromDate(details.changeDate),
    resourceOwner: details.resourceOwner,
  };
}

function notFound(): never {
  throw apiError(Code.NotFound, 'FEAT-NoInstance', 'instance not found');
}

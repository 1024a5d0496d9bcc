/**
 * zitadel.app.v2beta.AppService (docs/management-api.md): the applications of projects — OIDC clients
 * and API resource servers — and their keys. IAM_OWNER manages every application, ORG_OWNER those of
 * its organizations' projects (api/management/access.ts). Writes: app/writes.ts; reads and lists:
 * app/reads.ts; keys: app/keys.ts; ZITADEL's settings and Gatehouse's rules: app/settings.ts and
 * domain/applications.ts.
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { AppService } from '../../gen/zitadel/app/v2beta/app_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { keyMethods } from './app/keys.ts';
import { readMethods } from './app/reads.ts';
import { writeMethods } from './app/writes.ts';

export function createAppService(gh: Gatehouse): Partial<ServiceImpl<typeof AppService>> {
  return { ...writeMethods(gh), ...readMethods(gh), ...keyMethods(gh) };
}

/** AuthorizationService of the management API (SPEC §12): being written (issue 12); methods not listed here answer Unimplemented. */
import type { ServiceImpl } from '@connectrpc/connect';
import type { AuthorizationService } from '../../gen/zitadel/authorization/v2beta/authorization_service_pb.js';
import type { Gatehouse } from '../context.ts';

export function createAuthorizationService(_gh: Gatehouse): Partial<ServiceImpl<typeof AuthorizationService>> {
  return {};
}

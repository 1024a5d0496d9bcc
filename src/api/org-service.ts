/** OrganizationService of the management API (SPEC §12): being written (issue 12); methods not listed here answer Unimplemented. */
import type { ServiceImpl } from '@connectrpc/connect';
import type { OrganizationService } from '../../gen/zitadel/org/v2/org_service_pb.js';
import type { Gatehouse } from '../context.ts';

export function createOrganizationService(_gh: Gatehouse): Partial<ServiceImpl<typeof OrganizationService>> {
  return {};
}

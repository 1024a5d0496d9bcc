/** ProjectService of the management API (SPEC §12): being written (issue 12); methods not listed here answer Unimplemented. */
import type { ServiceImpl } from '@connectrpc/connect';
import type { ProjectService } from '../../gen/zitadel/project/v2beta/project_service_pb.js';
import type { Gatehouse } from '../context.ts';

export function createProjectService(_gh: Gatehouse): Partial<ServiceImpl<typeof ProjectService>> {
  return {};
}

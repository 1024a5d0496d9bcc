/** AppService of the management API (SPEC §12): being written (issue 12); methods not listed here answer Unimplemented. */
import type { ServiceImpl } from '@connectrpc/connect';
import type { AppService } from '../../gen/zitadel/app/v2beta/app_service_pb.js';
import type { Gatehouse } from '../context.ts';

export function createAppService(_gh: Gatehouse): Partial<ServiceImpl<typeof AppService>> {
  return {};
}

/**
 * The API services that need the whole running server (keys, caches, configuration), registered on
 * the one router beside the FeatureService. Each issue adds its service here.
 */
import type { ConnectRouter } from '@connectrpc/connect';
import type { Gatehouse } from '../context.ts';

export function registerServices(_router: ConnectRouter, _gh: Gatehouse): void {
  // The FeatureService is registered by the handler itself; the identity API's services join here.
}

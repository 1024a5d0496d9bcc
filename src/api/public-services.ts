/**
 * The gRPC ecosystem's own services, served beside the API without authentication (load balancers,
 * Kubernetes probes and grpcurl carry no token): grpc.health.v1.Health and, unless switched off,
 * server reflection. They cover every service on the router, themselves included, so they are
 * registered last.
 */
import type { ConnectRouter } from '@connectrpc/connect';
import type { DescService } from '@bufbuild/protobuf';
import { Health } from '../../gen/grpc/health/v1/health_pb.js';
import { ServerReflection as ReflectionV1 } from '../../gen/grpc/reflection/v1/reflection_pb.js';
import { ServerReflection as ReflectionV1Alpha } from '../../gen/grpc/reflection/v1alpha/reflection_pb.js';
import { createHealthService } from './health-service.ts';
import { createReflectionIndex } from './reflection-index.ts';
import { createReflectionV1, createReflectionV1Alpha } from './reflection-service.ts';
import type { ServingProbe } from './serving-probe.ts';

/** Services the auth interceptor lets through without a token. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set([Health.typeName, ReflectionV1.typeName, ReflectionV1Alpha.typeName]);

export interface PublicServiceOptions {
  probe: ServingProbe;
  /** GATEHOUSE_GRPC_REFLECTION */
  reflection: boolean;
}

export function registerPublicServices(router: ConnectRouter, options: PublicServiceOptions): void {
  const served = new Map<string, DescService>(router.handlers.map((handler) => [handler.service.typeName, handler.service]));
  const ours: DescService[] = options.reflection ? [Health, ReflectionV1, ReflectionV1Alpha] : [Health];
  const all = [...served.values(), ...ours];
  router.service(Health, createHealthService(all.map((service) => service.typeName), options.probe));
  if (options.reflection) {
    const index = createReflectionIndex(all);
    router.service(ReflectionV1, createReflectionV1(index));
    router.service(ReflectionV1Alpha, createReflectionV1Alpha(index));
  }
}

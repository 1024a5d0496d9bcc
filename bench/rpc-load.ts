/**
 * Load over gRPC (h2c), which autocannon cannot speak: `concurrency` loops calling one unary method
 * through a connect-node gRPC transport for `seconds`, with p99 latency.
 */
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AuthService } from '../gen/zitadel/auth_pb.js';

export interface RpcResult {
  perSecond: number;
  p99: number;
  errors: number;
}

export async function loadAddOtpOverGrpc(baseUrl: string, token: string, concurrency: number, seconds: number): Promise<RpcResult> {
  const auth = createClient(AuthService, createGrpcTransport({ baseUrl }));
  const headers = { authorization: `Bearer ${token}` };
  const latencies: number[] = [];
  let errors = 0;
  const started = Date.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const t = performance.now();
        try {
          await auth.addMyAuthFactorOTP({}, { headers });
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / ((Date.now() - started) / 1000),
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
    errors,
  };
}

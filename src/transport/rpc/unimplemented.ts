/**
 * Answers for procedures no service implements (a service not registered yet, or an unknown one):
 * Unimplemented in the caller's own protocol, so that every client reports a clean
 * "unimplemented" instead of an HTML 404 from Express.
 */
import { respond, type NodeRequest, type NodeResponse } from '../../http/node-types.ts';
import { encodeGrpcMessage, respondTrailersOnly } from './trailers-only.ts';

// /package.Service/Method
const PROCEDURE_PATH = /^\/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\/[A-Za-z_]\w*$/;
const RPC_CONTENT_TYPE = /^application\/(?:grpc|connect\+)/i;

/** Whether the request is an RPC (gRPC, gRPC-web or Connect) by its path and content type or method. */
export function isRpcRequest(req: NodeRequest, path: string): boolean {
  if (!PROCEDURE_PATH.test(path)) return false;
  return req.method === 'POST' || RPC_CONTENT_TYPE.test(req.headers['content-type'] ?? '') || /[?&]connect=v1(?:&|$)/.test(req.url ?? '');
}

export function answerUnimplemented(req: NodeRequest, res: NodeResponse, path: string): void {
  const message = `no such procedure: ${path.slice(1)}`;
  const contentType = (req.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (contentType.startsWith('application/grpc')) {
    // gRPC and gRPC-web "trailers-only" answer: the status travels in the headers.
    respondTrailersOnly(res, { 'content-type': contentType, 'grpc-status': '12', 'grpc-message': encodeGrpcMessage(message) });
    return;
  }
  // Connect protocol: Unimplemented is HTTP 404 with the Connect error JSON.
  const body = JSON.stringify({ code: 'unimplemented', message });
  respond(res, 404, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body);
}

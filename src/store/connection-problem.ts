/**
 * Why a PostgreSQL server could not be used, in words an operator acts on: the causes a wrong
 * `DATABASE_URL` or a server that is not there produce at start (docs/operations.md#database).
 * Undefined for any other error.
 */
const BY_CODE: Record<string, string> = {
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (the name could not be resolved now)',
  ECONNREFUSED: 'connection refused (nothing listens on that host and port)',
  ECONNRESET: 'the server closed the connection',
  ETIMEDOUT: 'the server did not answer',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  // PostgreSQL's SQLSTATEs
  '28P01': 'authentication failed (wrong user name or password)',
  '28000': 'authentication failed (the server refuses this user or address)',
  '3D000': 'no such database',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'the server has no free connection',
};

export function connectionProblem(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string' && code in BY_CODE) return BY_CODE[code];
  // node-postgres's own words for a connection attempt that outlived connectionTimeoutMillis
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(error.message)) return 'the server did not answer';
  // a server that speaks another protocol on that port
  if (/unexpected copyData|Received unexpected|invalid response/i.test(error.message)) return 'the server there is not PostgreSQL';
  return undefined;
}

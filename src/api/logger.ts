/** The slice of a pino logger the API uses; a pino `Logger` fits as is. */
export interface ApiLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => {};

export const silentLogger: ApiLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

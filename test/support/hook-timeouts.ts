/**
 * Gives `beforeAll` and `afterAll` hooks without a timeout of their own a budget of HOOK_TIMEOUT_MS
 * instead of the 30 s a test gets (jest.config.js testTimeout). Those hooks start and stop servers and
 * databases: on a busy machine that takes longer and should slow the run, not fail it, while a hook
 * that really hangs still fails within two minutes. (jest has no hook timeout setting of its own.)
 */
const HOOK_TIMEOUT_MS = 120_000;

const { beforeAll, afterAll } = globalThis;
globalThis.beforeAll = (fn, timeout) => beforeAll(fn, timeout ?? HOOK_TIMEOUT_MS);
globalThis.afterAll = (fn, timeout) => afterAll(fn, timeout ?? HOOK_TIMEOUT_MS);

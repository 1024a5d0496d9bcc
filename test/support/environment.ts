/**
 * jest's node environment, plus one thing: the suites get the project's own modules (src/, gen/)
 * from Node's module cache of the jest worker, loaded and compiled once per worker, rather than a
 * fresh copy inside every test file's VM context (native-modules.ts maps the imports). Loading the
 * server's module graph into a new context cost each file 0.6–0.8 s of CPU, and its code started
 * cold every time; measured on 13 OAuth suites, 45.6 s of CPU became 35.3 s.
 *
 * The price is that objects cross two realms: an Error or an instance of another built-in class the
 * project makes is not `instanceof` the constructor of the same name in the test file's context, and
 * the reverse. Date is the exception, shared by both (below), which also makes a clock mocked with
 * jest.spyOn(Date, 'now') the project's clock, and one left mocked every later file's: so a suite that
 * mocks the clock, or relies on instanceof across the realms, says so with the `@gatehouse-vm-modules`
 * docblock pragma (and why) and gets its own copies and its own Date, as does every suite when
 * GATEHOUSE_TEST_VM_MODULES is set. The modules' state is shared by the files a worker runs, like the
 * servers of one process.
 *
 * jest loads this file with Node's own loader (jest.config.js keeps it out of the transform), so its
 * `import()` is Node's and not the test context's.
 */
import { registerHooks } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TestEnvironment } from 'jest-environment-node';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';

// The shared modules hash secrets through argon2-memo.ts (the fixtures' secrets once per worker, not
// once per server); the memo itself gets the real package.
const MEMO = pathToFileURL(path.join(import.meta.dirname, 'argon2-memo.ts')).href;
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === '@node-rs/argon2' && context.parentURL !== MEMO) return { url: MEMO, shortCircuit: true };
    return nextResolve(specifier, context);
  },
});

export default class GatehouseEnvironment extends TestEnvironment {
  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    const shared =
      context.docblockPragmas['gatehouse-vm-modules'] === undefined &&
      !process.env['GATEHOUSE_TEST_VM_MODULES'];
    if (shared) {
      this.global['__gatehouseNativeImport'] = (specifier: string) =>
        import(path.isAbsolute(specifier) ? pathToFileURL(specifier).href : specifier);
      // One Date for both realms: PGlite refuses a Date of another realm as a query parameter, and
      // a suite checks the project's Dates with toBeInstanceOf(Date). (jest protects the worker's
      // own globals from its cleanup between files.)
      this.global['Date'] = Date;
    }
  }
}

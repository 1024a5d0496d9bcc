/** What the bootstrap file's reader refuses in a document, for the suites of the file's rules. */
import { BootstrapError, parseBootstrap } from '../../src/bootstrap/schema.ts';

/** The problems `parseBootstrap` reports for `text` read as `file`; fails when the document is accepted. */
export function bootstrapProblems(text: string, file: string): BootstrapError {
  try {
    parseBootstrap(text, file);
  } catch (error) {
    if (error instanceof BootstrapError) return error;
    throw error;
  }
  throw new Error('the document was accepted');
}

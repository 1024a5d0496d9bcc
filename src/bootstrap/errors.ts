/**
 * The one error of the bootstrap: every problem found, each naming the file, where in the document
 * it is (`orgs[0].projects[0].apps[1].redirectUris[0]`, or a line and column for syntax errors) and
 * what is wrong. Validation collects all problems before reporting; applying stops at the first
 * conflict with the database (and rolls everything back).
 */
export interface BootstrapIssue {
  file: string;
  /** Path in the document, `line L, column C` for a syntax error, or '' for the document itself. */
  path: string;
  message: string;
}

export function formatIssue(issue: BootstrapIssue): string {
  return issue.path === '' ? `${issue.file}: ${issue.message}` : `${issue.file}: ${issue.path}: ${issue.message}`;
}

export class BootstrapError extends Error {
  readonly issues: readonly BootstrapIssue[];

  constructor(issues: readonly BootstrapIssue[]) {
    const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
    super(`bootstrap failed, ${count}:\n${issues.map((issue) => `  - ${formatIssue(issue)}`).join('\n')}`);
    this.name = 'BootstrapError';
    this.issues = issues;
  }
}

/** Organizations (docs/decisions.md#organizations). */

/**
 * docs/decisions.md#organizations: an organization's primary domain is its name lower-cased, runs
 * of characters other than a–z and 0–9 turned into "-" (and none at either end), then "." and the
 * external URL's host. Undefined when nothing of the name is left (a name of symbols only).
 */
export function primaryDomainFor(name: string, externalUrl: string): string | undefined {
  const label = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  if (label === '') return undefined;
  return `${label.slice(0, 63).replace(/-+$/, '')}.${new URL(externalUrl).hostname}`;
}

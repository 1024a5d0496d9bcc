/**
 * What the bootstrap file's reconcilers share when they call a wing of the domain: the actor every
 * change is made by (`bootstrap`, the events' creator), and the wing's refusals reported as
 * conflicts at the path of the document the refused value came from.
 */
import { Refusal } from '../domain/kernel/refusals.ts';
import { ValueTaken } from '../domain/projects/refusals.ts';
import { conflict, type ApplyContext } from './apply-support.ts';

/** The events' creator for every change the file makes. */
export function fileActor(ctx: ApplyContext): { instanceId: string; creator: string } {
  return { instanceId: ctx.instanceId, creator: 'bootstrap' };
}

/** The report of a value the instance's namespace of token names holds already (domain/kernel/identifiers.ts). */
export function takenValue(value: string): string {
  return `"${value}" is taken: user ids, machine user names, project ids, application ids and client ids share one namespace, and a value is never given again after its holder is deleted`;
}

/** How a reconciler reports a refusal: the document's field (under the object's path) and the words, where the wing's differ. */
export type Report = (refusal: Refusal) => { field?: string; message?: string } | undefined;

/** The refusal's words without the field the wing put in front (the document's path names it instead). */
function wordsOf(refusal: Refusal): string {
  const prefix = refusal.field === undefined ? '' : `${refusal.field}: `;
  return refusal.message.startsWith(prefix) ? refusal.message.slice(prefix.length) : refusal.message;
}

/**
 * Runs a wing's write for the object at `path`; a Refusal becomes the file's conflict at `path` and
 * the refusal's field (or what `report` says), anything else passes.
 */
export async function reported<T>(ctx: ApplyContext, path: string, work: () => Promise<T>, report?: Report): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const custom = report?.(error);
    const field = custom?.field ?? error.field;
    const message = custom?.message ?? (error instanceof ValueTaken ? takenValue(error.value) : wordsOf(error));
    conflict(ctx, field === undefined ? path : `${path}.${field}`, message);
  }
}

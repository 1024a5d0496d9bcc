/**
 * The form parts every login page shares: labelled fields whose hints and errors are tied to the
 * input by aria-describedby, buttons and links. The page shell around them is http/page.ts (the
 * error page shares it).
 */
import { html, type Html, type Interpolation } from '../http/html.ts';

export interface FieldParts {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password';
  value?: string | undefined;
  autocomplete: string;
  hint?: Interpolation;
  error?: string | undefined;
  autofocus?: boolean;
  maxLength?: number;
  /** Names and addresses typed exactly: no auto-capitalization, no spell check. */
  verbatim?: boolean;
}

/** A labelled input; `hint` and `error` are read out with it. */
export function field(f: FieldParts): Html {
  const id = `f-${f.name}`;
  const described = [f.hint ? `${id}-hint` : '', f.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
<label for="${id}">${f.label}</label>
${f.hint ? html`<div class="hint" id="${id}-hint">${f.hint}</div>` : ''}
<input id="${id}" name="${f.name}" type="${f.type ?? 'text'}"${f.type === 'password' ? '' : html` value="${f.value ?? ''}"`} autocomplete="${f.autocomplete}" required${
    f.maxLength ? html` maxlength="${f.maxLength}"` : ''
  }${f.verbatim ? html` autocapitalize="none" spellcheck="false"` : ''}${described ? html` aria-describedby="${described}"` : ''}${
    f.error ? html` aria-invalid="true"` : ''
  }${f.autofocus ? html` autofocus` : ''}>
${f.error ? html`<p class="field-error" id="${id}-error">${f.error}</p>` : ''}
</div>`;
}

export function button(label: string): Html {
  return html`<button type="submit" class="primary">${label}</button>`;
}

export function link(href: string, label: string): Html {
  return html`<a href="${href}">${label}</a>`;
}

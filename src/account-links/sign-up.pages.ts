import { html } from '../web/html.js';
import { fieldError, page } from '../web/layout.js';
import { PASSWORD_MIN_LENGTH } from '../users/user-validation.js';

export interface SignUpValues {
  username?: string;
  email?: string;
  name?: string;
}

function field(options: {
  id: 'username' | 'email' | 'name' | 'password';
  label: string;
  type: string;
  autocomplete: string;
  value?: string;
  hint?: string;
  error?: string;
}) {
  const describedBy = [options.hint ? `${options.id}-hint` : '', options.error ? `${options.id}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${options.id}">${options.label}</label>
    <input
      id="${options.id}"
      name="${options.id}"
      type="${options.type}"
      autocomplete="${options.autocomplete}"
      required
      value="${options.value ?? ''}"
      aria-invalid="${options.error ? 'true' : 'false'}"
      ${describedBy ? html`aria-describedby="${describedBy}"` : ''}
    />
    ${options.hint ? html`<p class="hint" id="${options.id}-hint">${options.hint}</p>` : null} ${fieldError(options.error, options.id)}`;
}

export function signUpPage(options: {
  csrfToken: string;
  returnTo: string;
  values?: SignUpValues;
  errors?: Record<string, string>;
  /** A problem with the request as a whole, shown above the form. */
  notice?: string;
}): string {
  const values = options.values ?? {};
  const errors = options.errors ?? {};
  return page({
    title: 'Create your account',
    narrow: true,
    body: html`<div class="card">
      <h1>Create your Agora account</h1>
      <p class="lead">Already have one? <a href="/sign-in?return_to=${encodeURIComponent(options.returnTo)}">Sign in</a></p>
      ${options.notice ? html`<div class="alert error" role="alert">${options.notice}</div>` : null}
      <form method="post" action="/sign-up" novalidate>
        <input type="hidden" name="_csrf" value="${options.csrfToken}" />
        <input type="hidden" name="return_to" value="${options.returnTo}" />
        ${field({ id: 'name', label: 'Name', type: 'text', autocomplete: 'name', value: values.name, error: errors.name })}
        ${field({
          id: 'username',
          label: 'Username',
          type: 'text',
          autocomplete: 'username',
          value: values.username,
          hint: '2 to 39 characters: letters, digits, "_", "." or "-"',
          error: errors.username,
        })}
        ${field({
          id: 'email',
          label: 'Email',
          type: 'email',
          autocomplete: 'email',
          value: values.email,
          hint: 'We send a link to this address to verify it',
          error: errors.email,
        })}
        ${field({
          id: 'password',
          label: 'Password',
          type: 'password',
          autocomplete: 'new-password',
          hint: `At least ${PASSWORD_MIN_LENGTH} characters; a passphrase is easiest to remember`,
          error: errors.password,
        })}
        <div class="actions stretch"><button type="submit">Create account</button></div>
      </form>
    </div>`,
  });
}

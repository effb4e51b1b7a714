import { html } from '../../web/html.js';
import { page } from '../../web/layout.js';

/**
 * Shown on every page of an application that registered itself: nobody at Agora vouches for its name,
 * so the user should judge it by where it sends them.
 */
export function selfRegisteredNotice(destination: string | undefined) {
  return html`<div class="alert warn" role="note">
    <strong>Not verified by Agora.</strong> This application registered itself: no Agora account answers for it, and its name was chosen by
    whoever registered it.
    ${destination ? html`Continue only if you trust <strong>${destination}</strong>.` : 'Continue only if you trust it.'}
  </div>`;
}

/**
 * Instead of an automatic redirect to a self-registered application (an error the user did not cause):
 * the answer for the application, as a link the user can follow once they have seen where it goes (or,
 * for response_mode=form_post, a button that posts it).
 */
export function returnToApplicationPage(
  options: {
    applicationName: string;
    destination: string;
    heading: string;
    description: string;
  } & ({ location: string } | { form: { action: string; fields: Record<string, string> } }),
): string {
  const { applicationName, destination, heading, description } = options;
  const answer =
    'location' in options
      ? html`<a class="button" href="${options.location}" rel="noreferrer">Return to ${destination}</a>`
      : html`<form method="post" action="${options.form.action}">
          ${Object.entries(options.form.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
          <button type="submit">Return to ${destination}</button>
        </form>`;
  return page({
    title: heading,
    narrow: true,
    body: html`<div class="card">
      <h1>${heading}</h1>
      <p class="lead"><span class="app-name">${applicationName}</span> sent you here and is waiting for an answer.</p>
      <div class="alert error" role="alert">${description}</div>
      ${selfRegisteredNotice(destination)}
      <div class="actions">${answer}</div>
      <p class="footnote">Nothing was shared with the application. The link tells it what happened.</p>
    </div>`,
  });
}

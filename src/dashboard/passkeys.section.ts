import type { Passkey } from '../passkeys/passkey.model.js';
import { html, SafeHtml } from '../web/html.js';

const day = (date: Date | null) => (date ? new Date(date).toISOString().slice(0, 10) : 'never');

/** The security page's "Passkeys" section: the user's passkeys, each with rename and remove, and "Add a passkey". */
export function passkeysSection(passkeys: readonly Passkey[] | undefined): SafeHtml | null {
  if (passkeys === undefined) return null;
  return html`<h2 class="section" id="passkeys">Passkeys</h2>
    <p>
      Sign in with your device's screen lock, fingerprint or face, or a security key, instead of your password. A passkey also serves as
      your second factor.
    </p>
    ${
      passkeys.length === 0
        ? html`<p class="empty">You have no passkeys yet.</p>`
        : html`<table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col"><span class="muted">Action</span></th>
              </tr>
            </thead>
            <tbody>
              ${passkeys.map(
                (p) =>
                  html`<tr>
                    <td class="row-title" data-label="Name">
                      ${p.name} <span class="tag">${p.deviceType === 'multiDevice' ? 'synced' : 'this device only'}</span>
                    </td>
                    <td class="date" data-label="Added">${day(p.createdAt)}</td>
                    <td class="date" data-label="Last used">${day(p.lastUsedAt)}</td>
                    <td class="row-action">
                      <a class="button secondary" href="/account/passkeys/${p.id}/rename">Rename</a>
                      <a class="button secondary" href="/account/passkeys/${p.id}/remove">Remove…</a>
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <div class="actions"><a class="button" href="/account/passkeys/new">Add a passkey</a></div>`;
}

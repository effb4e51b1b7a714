// Passkeys (WebAuthn) on the sign-in page, the second step of a sign-in and "Add a passkey". The server
// puts the options, as JSON, in the form's data-options; the browser's own parsers read them, and
// credential.toJSON() goes back in the form's hidden "credential" field, posted like any other form.
const supported =
  typeof PublicKeyCredential === 'function' &&
  typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function' &&
  typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function';

function explain(error) {
  if (error.name === 'NotAllowedError') return 'The passkey request was cancelled, timed out, or could not check that it is you. Try again.';
  if (error.name === 'InvalidStateError') return 'This device already holds a passkey for your account.';
  if (error.name === 'SecurityError') return 'This browser refused to use a passkey for this site.';
  return `Your browser could not use a passkey (${error.message}).`;
}

for (const form of document.querySelectorAll('form[data-passkey]')) {
  const button = form.querySelector('[data-passkey-start]');
  const problem = form.querySelector('[data-passkey-error]');
  if (!supported) continue;
  form.querySelector('[data-passkey-unsupported]').hidden = true;
  button.disabled = false;
  const options = JSON.parse(form.dataset.options);

  const send = (credential) => {
    form.elements.namedItem('credential').value = JSON.stringify(credential.toJSON());
    form.submit();
  };
  const fail = (error) => {
    button.disabled = false;
    if (error.name === 'AbortError') return;
    problem.textContent = explain(error);
    problem.hidden = false;
  };

  if (form.dataset.passkey === 'registration') {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      button.disabled = true;
      problem.hidden = true;
      navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) }).then(send, fail);
    });
    continue;
  }

  // The login field's autofill offers this site's passkeys (conditional mediation) until the button is used.
  let autofill = null;
  if (form.dataset.passkey === 'sign-in' && typeof PublicKeyCredential.isConditionalMediationAvailable === 'function') {
    PublicKeyCredential.isConditionalMediationAvailable().then((available) => {
      if (!available || autofill) return;
      const controller = new AbortController();
      const request = navigator.credentials
        .get({ mediation: 'conditional', publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options), signal: controller.signal })
        .then(send, () => undefined);
      autofill = { controller, request };
    });
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    problem.hidden = true;
    if (autofill) {
      // One request at a time: the autofill's must have ended before the button's starts.
      autofill.controller.abort();
      await autofill.request;
    }
    autofill = { controller: new AbortController(), request: Promise.resolve() };
    navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) }).then(send, fail);
  });
}

// Gatehouse's passkey ceremonies (docs/passkeys.md), served as a file because the pages allow no
// inline script. Each form.passkey (sign-in) and form.passkey-add (the self-service page) stays
// hidden unless the browser offers WebAuthn. Its button asks the server for options (a POST of the
// form's hidden fields, with its CSRF token), lets the browser ask the authenticator
// (navigator.credentials.get or create), and submits the result with the form: the server answers
// with the next page (the client's callback, or the same page with its message when refused).
// A form.passkey with data-autofill also offers the browser's passkeys in the autofill of the page's
// `autocomplete="... webauthn"` field (conditional mediation): a request that waits, silently, until
// the user picks a passkey there. The button stops it first (a browser runs one request at a time),
// and a challenge about to lapse is replaced by a fresh one.
// A form.passkey-add with data-reuse tries again with the same registration after a cancelled ceremony.
'use strict';

(function () {
  function toBytes(base64url) {
    var base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
    var binary = atob(base64 + '==='.slice((base64.length + 3) % 4));
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var binary = '';
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  // A list of credential descriptors with their ids as ArrayBuffers.
  function credentialIds(list) {
    return list
      ? list.map(function (c) {
          return Object.assign({}, c, { id: toBytes(c.id) });
        })
      : undefined;
  }

  // The server's options in WebAuthn's JSON form, with the binary members as ArrayBuffers.
  function requestOptions(json) {
    var options = Object.assign({}, json, { challenge: toBytes(json.challenge) });
    if (json.allowCredentials) options.allowCredentials = credentialIds(json.allowCredentials);
    return options;
  }

  function creationOptions(json) {
    var options = Object.assign({}, json, {
      challenge: toBytes(json.challenge),
      user: Object.assign({}, json.user, { id: toBytes(json.user.id) }),
    });
    if (json.excludeCredentials) options.excludeCredentials = credentialIds(json.excludeCredentials);
    return options;
  }

  // A credential as PublicKeyCredential.toJSON() gives it (what the server verifies).
  function credentialJson(credential, response) {
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: response,
    };
  }

  function assertionJson(credential) {
    var r = credential.response;
    return credentialJson(credential, {
      clientDataJSON: toBase64url(r.clientDataJSON),
      authenticatorData: toBase64url(r.authenticatorData),
      signature: toBase64url(r.signature),
      userHandle: r.userHandle ? toBase64url(r.userHandle) : undefined,
    });
  }

  function attestationJson(credential) {
    var r = credential.response;
    return credentialJson(credential, {
      clientDataJSON: toBase64url(r.clientDataJSON),
      attestationObject: toBase64url(r.attestationObject),
      transports: r.getTransports ? r.getTransports() : undefined,
    });
  }

  function showMessage(text) {
    var alert = document.querySelector('.alert');
    if (!alert) return;
    var p = document.createElement('p');
    p.textContent = text;
    alert.replaceChildren(p);
  }

  // The form's fields except the ones the ceremony fills: what the options endpoint needs.
  async function fetchOptions(form) {
    var body = new URLSearchParams();
    Array.prototype.forEach.call(form.elements, function (element) {
      if (element.name && element.name !== 'credential') body.set(element.name, element.value);
    });
    var reply = await fetch(form.getAttribute('data-options'), { method: 'POST', body: body, credentials: 'same-origin' });
    if (!reply.ok) throw new Error('no options');
    return reply.json();
  }

  function submitAssertion(form, challengeId, credential) {
    form.elements.namedItem('challengeId').value = challengeId;
    form.elements.namedItem('credential').value = JSON.stringify(assertionJson(credential));
    form.submit();
  }

  function ignore() {}

  // Conditional mediation for a sign-in form; returns the function that stops it (and waits until the
  // browser has let go of the request).
  function offerInAutofill(form, button) {
    var stopped = false;
    var pending = null;
    async function run() {
      var started = await fetchOptions(form);
      if (stopped) return;
      var controller = new AbortController();
      var request = navigator.credentials.get({ mediation: 'conditional', publicKey: requestOptions(started.options), signal: controller.signal });
      pending = { controller: controller, settled: request.then(ignore, ignore) };
      // The server forgets a challenge after options.timeout: ask for a new one a little before.
      var lapse = setTimeout(function () {
        controller.abort();
      }, Math.max(10000, (started.options.timeout || 300000) - 10000));
      try {
        var credential = await request;
        if (stopped || !credential) return;
        stopped = true;
        button.disabled = true; // one submission: no second ceremony while the page changes
        submitAssertion(form, started.challengeId, credential);
      } catch (error) {
        if (!stopped && controller.signal.aborted) run().catch(ignore);
      } finally {
        clearTimeout(lapse);
      }
    }
    run().catch(ignore);
    return async function stop() {
      stopped = true;
      if (pending) {
        pending.controller.abort();
        // Browsers settle an aborted request at once; never wait more than a second for one that does not.
        await Promise.race([pending.settled, new Promise(function (resolve) {
          setTimeout(resolve, 1000);
        })]);
      }
    };
  }

  async function signIn(form) {
    var started = await fetchOptions(form);
    var credential = await navigator.credentials.get({ publicKey: requestOptions(started.options) });
    if (!credential) throw new Error('no credential');
    submitAssertion(form, started.challengeId, credential);
  }

  // A form.passkey-add with data-reuse (a registration link's page) keeps its options for another try:
  // the code was used when they were handed out, and the registration lasts options.timeout.
  var kept = new WeakMap();

  async function registrationOptions(form) {
    var last = kept.get(form);
    if (last && Date.now() < last.until) return last.started;
    var started = await fetchOptions(form);
    if (form.hasAttribute('data-reuse')) kept.set(form, { started: started, until: Date.now() + (started.options.timeout || 300000) - 10000 });
    return started;
  }

  async function register(form) {
    var started = await registrationOptions(form);
    var credential = await navigator.credentials.create({ publicKey: creationOptions(started.options) });
    if (!credential) throw new Error('no credential');
    form.elements.namedItem('passkeyId').value = started.passkeyId;
    form.elements.namedItem('credential').value = JSON.stringify(attestationJson(credential));
    form.submit();
  }

  async function autofillAvailable() {
    try {
      return typeof PublicKeyCredential.isConditionalMediationAvailable === 'function' && (await PublicKeyCredential.isConditionalMediationAvailable());
    } catch (error) {
      return false;
    }
  }

  function wire(selector, ceremony, messageAttribute) {
    document.querySelectorAll(selector).forEach(function (form) {
      var button = form.querySelector('button');
      if (!button) return;
      form.hidden = false;
      var stopAutofill = null;
      if (form.hasAttribute('data-autofill')) {
        autofillAvailable().then(function (available) {
          if (available && !button.disabled) stopAutofill = offerInAutofill(form, button);
        });
      }
      button.addEventListener('click', async function () {
        if (!form.reportValidity()) return;
        button.disabled = true;
        try {
          if (stopAutofill) await stopAutofill();
          stopAutofill = null;
          await ceremony(form);
        } catch (error) {
          // Cancelled, no passkey, or no options: the same message as a refusal by the server.
          showMessage(form.getAttribute(messageAttribute));
          button.disabled = false;
        }
      });
    });
  }

  if (!window.PublicKeyCredential || !navigator.credentials) return;
  wire('form.passkey', signIn, 'data-refused');
  wire('form.passkey-add', register, 'data-failed');
})();

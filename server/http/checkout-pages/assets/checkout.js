// Hosted checkout behaviour: submit a payment, follow it while it is being verified,
// follow the result. The page itself is rendered by the server for the current
// state; whenever the state changes this script reloads it.
(function () {
  'use strict';

  var root = document.getElementById('checkout');
  if (!root) return;
  var api = root.getAttribute('data-api');
  var status = root.getAttribute('data-status');
  // The service is asking the merchant's phone for the SMS that proves the submitted id.
  var checkingPhone = root.getAttribute('data-checking-phone') === 'true';
  var expiresAt = Date.parse(root.getAttribute('data-expires-at') || '');
  var redirectUrl = root.getAttribute('data-redirect-url');
  // The page's language: its strings come with the page (data-strings), English when absent.
  var strings = {};
  try { strings = JSON.parse(root.getAttribute('data-strings') || '{}'); } catch { strings = {}; }
  function say(key, fallback) { return typeof strings[key] === 'string' ? strings[key] : fallback; }
  var RELOAD_CODES = ['PAYMENT_ALREADY_STARTED', 'PAYMENT_EXPIRED', 'PAYMENT_NOT_FOUND', 'BRAND_DISABLED'];

  function reload() {
    window.location.reload();
  }

  function firstError(body) {
    var item = body && body.errors && body.errors[0];
    var code = item ? item.code : null;
    var message = (code && say('code_' + code, '')) || (body && body.error) || say('generic', 'Something went wrong. Please try again.');
    return { code: code, message: message };
  }

  function request(method, path, body) {
    var init = { method: method, headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return window.fetch(api + path, init).then(function (res) {
      return res.json().then(
        function (json) { return { ok: res.ok, status: res.status, body: json }; },
        function () { return { ok: false, status: res.status, body: null }; }
      );
    });
  }

  function showError(el, message) {
    if (!el) return;
    el.textContent = message;
    el.hidden = !message;
  }

  // Copy buttons (account number, amount): the clipboard API where the browser
  // allows it, else a hidden textarea and execCommand('copy').
  function copyText(text) {
    var clip = window.navigator && window.navigator.clipboard;
    if (clip && window.isSecureContext) return clip.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      var done;
      try { done = document.execCommand('copy'); } catch { done = false; }
      document.body.removeChild(area);
      if (done) resolve(); else reject(new Error('copy refused'));
    });
  }
  Array.prototype.forEach.call(root.querySelectorAll('button.copy'), function (button) {
    var label = button.textContent;
    button.addEventListener('click', function () {
      copyText(button.getAttribute('data-copy') || '').then(
        function () { button.textContent = say('copied', 'Copied'); button.classList.add('copied'); },
        function () { button.textContent = say('select_copy', 'Select and copy'); }
      );
      window.setTimeout(function () { button.textContent = label; button.classList.remove('copied'); }, 2000);
    });
  });

  // The page turns into "Payment link has expired" by itself when the time comes.
  if ((status === 'pending' || status === 'failed' || status === 'processing' || status === 'awaiting_verification') && !isNaN(expiresAt)) {
    var wait = Math.min(Math.max(expiresAt - Date.now() + 1000, 1000), 0x7fffffff);
    window.setTimeout(reload, wait);
  }

  Array.prototype.forEach.call(root.querySelectorAll('form.pay-form'), function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var errorEl = form.querySelector('.form-error');
      var button = form.querySelector('button[type=submit]');
      var body = { gateway: form.getAttribute('data-gateway') };
      var trx = form.querySelector('input[name=gateway_trx_id]');
      var sender = form.querySelector('input[name=sender_number]');
      if (trx) {
        var value = trx.value.trim();
        if (!value) {
          showError(errorEl, say('enter_trx', 'Enter the transaction ID you received.'));
          trx.focus();
          return;
        }
        body.gateway_trx_id = value;
      }
      if (sender && sender.value.trim()) body.sender_number = sender.value.trim();
      showError(errorEl, '');
      button.disabled = true;
      request('POST', '/transactions', body).then(
        function (res) {
          if (res.ok && res.body && res.body.success) {
            var t = res.body.data;
            if (t.redirect_url) window.location.assign(t.redirect_url);
            else reload();
            return;
          }
          var err = firstError(res.body);
          if (RELOAD_CODES.indexOf(err.code) >= 0) return reload();
          showError(errorEl, err.message);
          button.disabled = false;
        },
        function () {
          showError(errorEl, say('offline', 'Could not reach the server. Check your connection and try again.'));
          button.disabled = false;
        }
      );
    });
  });

  // A wrong transaction id, replaced while it waits for verification.
  var replaceForm = root.querySelector('form.replace-form');
  if (replaceForm) {
    replaceForm.addEventListener('submit', function (event) {
      event.preventDefault();
      var errorEl = replaceForm.querySelector('.form-error');
      var button = replaceForm.querySelector('button[type=submit]');
      var trx = replaceForm.querySelector('input[name=gateway_trx_id]');
      var sender = replaceForm.querySelector('input[name=sender_number]');
      var value = trx.value.trim();
      if (!value) {
        showError(errorEl, say('enter_correct_trx', 'Enter the correct transaction ID.'));
        trx.focus();
        return;
      }
      var body = { gateway_trx_id: value };
      if (sender && sender.value.trim()) body.sender_number = sender.value.trim();
      showError(errorEl, '');
      button.disabled = true;
      request('PUT', '/transaction/gateway-trx-id', body).then(
        function (res) {
          if (res.ok && res.body && res.body.success) return reload();
          var err = firstError(res.body);
          // CONFLICT: the id was changed elsewhere a moment ago; show the current one.
          if (RELOAD_CODES.indexOf(err.code) >= 0 || err.code === 'CONFLICT') return reload();
          showError(errorEl, err.message);
          button.disabled = false;
        },
        function () {
          showError(errorEl, say('offline', 'Could not reach the server. Check your connection and try again.'));
          button.disabled = false;
        }
      );
    });
  }

  var cancel = document.getElementById('cancel');
  if (cancel) {
    cancel.addEventListener('click', function () {
      var pageError = root.querySelector('.page-error');
      cancel.disabled = true;
      request('POST', '/cancellations').then(
        function (res) {
          if (res.ok && res.body && res.body.success) {
            if (res.body.data.cancel_url) return window.location.assign(res.body.data.cancel_url);
            cancel.hidden = true;
            return showError(pageError, say('canceled', 'Payment cancelled. You can close this page.'));
          }
          var err = firstError(res.body);
          if (RELOAD_CODES.indexOf(err.code) >= 0) return reload();
          showError(pageError, err.message);
          cancel.disabled = false;
        },
        function () {
          showError(pageError, say('offline', 'Could not reach the server. Check your connection and try again.'));
          cancel.disabled = false;
        }
      );
    });
  }

  // While a transaction is being verified, watch it and reload when it moves:
  // the server pushes the status (Server-Sent Events on .../status-stream); if
  // the stream is refused or keeps dropping, poll the payment instead, slowly.
  if (status === 'processing' || status === 'awaiting_verification') {
    var polling = false;
    var delay = checkingPhone ? 2000 : 5000;
    var poll = function () {
      request('GET', '').then(
        function (res) {
          var t = res.ok && res.body ? res.body.data.transaction : null;
          if (res.ok && res.body && (res.body.data.status !== status || Boolean(t && t.phone_check_until) !== checkingPhone)) return reload();
          delay = Math.min(delay * 1.25, 15000);
          window.setTimeout(poll, delay);
        },
        function () {
          delay = Math.min(delay * 2, 30000);
          window.setTimeout(poll, delay);
        }
      );
    };
    var startPolling = function () {
      if (polling) return;
      polling = true;
      window.setTimeout(poll, delay);
    };
    if (typeof window.EventSource === 'function') {
      var source = new window.EventSource(api + '/status-stream');
      var drops = 0;
      source.addEventListener('status', function (event) {
        drops = 0;
        var data;
        try { data = JSON.parse(event.data); } catch { return; }
        if (data.status !== status || Boolean(data.checking_phone) !== checkingPhone) {
          source.close();
          return reload();
        }
        if (data.terminal) source.close();
      });
      source.addEventListener('error', function () {
        // CLOSED: the server refused the stream (an error answer); otherwise
        // EventSource is reconnecting by itself, which is fine a few times.
        drops++;
        if (source.readyState === window.EventSource.CLOSED || drops >= 3) {
          source.close();
          startPolling();
        }
      });
    } else {
      startPolling();
    }
  }

  // Paid: show the confirmation a moment, then go back to the merchant.
  if (status === 'completed' && redirectUrl) {
    window.setTimeout(function () { window.location.assign(redirectUrl); }, 1200);
  }
})();

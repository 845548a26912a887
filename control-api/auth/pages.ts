// The three browser pages of the auth group. Tokens reach them only after a strict format check, and every
// interpolated value is HTML-escaped anyway. Each page is a real <form> (so it is readable without
// JavaScript) whose submit handler posts JSON, because the POST endpoints take JSON bodies only.

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function page(title: string, body: string, script: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f5f5f5;display:flex;justify-content:center;align-items:center;min-height:100vh;margin:0}
main{background:#fff;padding:32px;border-radius:8px;box-shadow:0 2px 10px rgba(0,0,0,.1);width:100%;max-width:400px}
input,button{width:100%;padding:10px;margin:6px 0 12px;box-sizing:border-box;font-size:15px}
#message{font-size:14px}
</style>
</head>
<body>
<main>
${body}
<p id="message" role="status"></p>
</main>
<script>
function postJson(path, body, ok, bad) {
  fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
    .then(function (r) { (r.ok ? ok : bad)(r); })
    .catch(function () { bad(null); });
}
function say(text) { document.getElementById('message').textContent = text; }
${script}
</script>
</body>
</html>
`;
}

/** GET /auth/email-verify with a live token: one button that posts the token. */
export function emailVerifyPage(token: string): string {
  return page(
    'Verify your email',
    `<h1>Verify your email</h1>
<p>Press the button to verify your email address and activate your account.</p>
<form id="verify" method="post" action="/auth/email-verify">
<input type="hidden" name="token" value="${esc(token)}">
<button type="submit">Verify email</button>
</form>`,
    `document.getElementById('verify').addEventListener('submit', function (e) {
  e.preventDefault();
  var token = this.elements.token.value;
  postJson('/auth/email-verify', { token: token },
    function () { say('Your email is verified. Check your inbox for the mail that sets your password.'); },
    function () { say('This link is invalid, expired or already used.'); });
});`,
  );
}

/** GET /auth/email-verify with an expired token: a form that asks for a new link. */
export function emailVerifyExpiredPage(email: string): string {
  return page(
    'Verification link expired',
    `<h1>This link has expired</h1>
<p>Verification links are valid for 24 hours. Ask for a new one:</p>
<form id="resend" method="post" action="/auth/email-verify-resend">
<label for="email">Email</label>
<input type="email" id="email" name="email" required value="${esc(email)}">
<button type="submit">Send a new link</button>
</form>`,
    `document.getElementById('resend').addEventListener('submit', function (e) {
  e.preventDefault();
  postJson('/auth/email-verify-resend', { email: this.elements.email.value },
    function () { say('If the address belongs to an unverified account, a new link is on its way.'); },
    function () { say('Something went wrong. Please try again later.'); });
});`,
  );
}

/** GET /auth/password-reset: the new-password form. */
export function passwordResetPage(token: string, minLength: number): string {
  return page(
    'Set your password',
    `<h1>Set your password</h1>
<form id="reset" method="post" action="/auth/password-reset">
<input type="hidden" name="token" value="${esc(token)}">
<label for="password">New password</label>
<input type="password" id="password" name="password" required minlength="${minLength}" autocomplete="new-password">
<label for="confirm">Repeat it</label>
<input type="password" id="confirm" name="confirm" required minlength="${minLength}" autocomplete="new-password">
<button type="submit">Save password</button>
</form>`,
    `document.getElementById('reset').addEventListener('submit', function (e) {
  e.preventDefault();
  var f = this.elements;
  if (f.password.value !== f.confirm.value) { say('The two passwords differ.'); return; }
  postJson('/auth/password-reset', { token: f.token.value, password: f.password.value },
    function () { say('Your password is saved. You can log in now.'); },
    function () { say('This link is invalid, expired or already used. Ask for a new one.'); });
});`,
  );
}

import { useState, type FormEvent } from 'react';
import { ApiError, describeError } from '../api.ts';
import { useSession } from '../session.tsx';
import { Button, Field, Input } from '../components/ui.tsx';

/** Words for each refusal of POST /session. */
function loginMessage(err: unknown): string {
  if (err instanceof ApiError) {
    switch (err.code) {
      case 'INVALID_CREDENTIALS':
        return 'Wrong e-mail, password or code.';
      case 'ACCOUNT_LOCKED':
        return 'This account is locked after too many failed attempts. Try again in 15 minutes.';
      case 'RATE_LIMITED':
        return 'Too many attempts from this address. Wait a few minutes and try again.';
      case 'TOTP_REQUIRED':
        return 'Enter the 6-digit code from your authenticator app.';
    }
  }
  return describeError(err);
}

export function LoginScreen({ notice }: { notice: string | null }) {
  const { login } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needCode, setNeedCode] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login({ email, password, ...(needCode && code ? { totp_code: code } : {}) });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'TOTP_REQUIRED') setNeedCode(true);
      setError(loginMessage(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="flex min-h-screen items-start justify-center px-4 pt-16 sm:pt-24">
      <div className="w-full max-w-sm">
        <h1 className="mb-1 text-2xl font-semibold text-slate-900">Paycollect console</h1>
        <p className="mb-6 text-sm text-slate-600">Log in with your operator account.</p>
        {notice ? (
          <p role="status" className="mb-4 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900">
            {notice}
          </p>
        ) : null}
        <form onSubmit={submit} className="flex flex-col gap-4 rounded-lg bg-white p-5 shadow-sm ring-1 ring-slate-200" noValidate>
          <Field label="E-mail" htmlFor="email">
            <Input id="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
          </Field>
          <Field label="Password" htmlFor="password">
            <Input id="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          </Field>
          {needCode ? (
            <Field label="Authenticator code" htmlFor="totp" hint="6 digits from your authenticator app.">
              <Input id="totp" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} value={code} onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))} autoFocus />
            </Field>
          ) : null}
          {error ? (
            <p role="alert" className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900">
              {error}
            </p>
          ) : null}
          <Button type="submit" variant="primary" busy={busy} disabled={!email || !password}>
            Log in
          </Button>
        </form>
        <p className="mt-4 text-xs text-slate-600">First run: the owner&apos;s e-mail and password are in the service&apos;s first-run credentials (DATA_DIR/first-run.txt).</p>
      </div>
    </main>
  );
}

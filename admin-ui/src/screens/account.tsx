import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useOperator } from '../session.tsx';
import { QrImage } from '../components/qr.tsx';
import { Button, Card, ErrorBox, Field, Input, Notice, PageTitle } from '../components/ui.tsx';

/** The signed-in operator's own password and TOTP. */
export function AccountScreen() {
  const me = useOperator();
  const [totpOn, setTotpOn] = useState(me.totp_enabled);
  const [pw, setPw] = useState({ current: '', next: '' });
  const [code, setCode] = useState('');
  const [notice, setNotice] = useState<string | null>(null);

  const changePassword = useMutation({
    mutationFn: async () => ok(api.session.changePassword({ body: { current_password: pw.current, new_password: pw.next } })),
    onSuccess: () => {
      setPw({ current: '', next: '' });
      setNotice('Password changed; your other sessions have ended.');
    },
  });
  const start = useMutation({ mutationFn: async () => (await ok(api.session.startTotp())).data });
  const confirm = useMutation({
    mutationFn: async () => (await ok(api.session.confirmTotp({ body: { code } }))).data,
    onSuccess: () => {
      setTotpOn(true);
      start.reset();
      setCode('');
      setNotice('TOTP is on: the next login asks for a code.');
    },
  });
  const disable = useMutation({
    mutationFn: async () => (await ok(api.session.disableTotp({ body: { code } }))).data,
    onSuccess: () => {
      setTotpOn(false);
      setCode('');
      setNotice('TOTP is off.');
    },
  });

  return (
    <div>
      <PageTitle>My account</PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <div className="grid gap-4 lg:grid-cols-2">
        <Card title="Password">
          <form
            className="flex flex-col gap-3"
            onSubmit={(e) => {
              e.preventDefault();
              changePassword.mutate();
            }}
          >
            <input type="text" autoComplete="username" value={me.email} readOnly hidden />
            <Field label="Current password" htmlFor="pw-current">
              <Input id="pw-current" type="password" autoComplete="current-password" required value={pw.current} onChange={(e) => setPw({ ...pw, current: e.target.value })} />
            </Field>
            <Field label="New password" htmlFor="pw-new" hint="At least 12 characters.">
              <Input id="pw-new" type="password" autoComplete="new-password" required minLength={12} value={pw.next} onChange={(e) => setPw({ ...pw, next: e.target.value })} />
            </Field>
            <ErrorBox error={changePassword.error} />
            <div>
              <Button type="submit" variant="primary" busy={changePassword.isPending} disabled={!pw.current || pw.next.length < 12}>
                Change password
              </Button>
            </div>
          </form>
        </Card>
        <Card title={`Two-step login (TOTP): ${totpOn ? 'on' : 'off'}`}>
          {!totpOn && !start.data ? (
            <>
              <p className="mb-3 text-sm text-slate-700">Ask for a 6-digit code from an authenticator app at every login.</p>
              <ErrorBox error={start.error} />
              <Button variant="primary" busy={start.isPending} onClick={() => start.mutate()}>
                Set up TOTP
              </Button>
            </>
          ) : null}
          {!totpOn && start.data ? (
            <form
              className="flex flex-col gap-3"
              onSubmit={(e) => {
                e.preventDefault();
                confirm.mutate();
              }}
            >
              <p className="text-sm text-slate-700">Scan this with your authenticator app (or type the secret), then enter the code it shows.</p>
              <QrImage text={start.data.otpauth_url} label="QR code of the TOTP secret" />
              <p className="font-mono text-sm break-all" data-testid="totp-secret">
                {start.data.secret}
              </p>
              <Field label="Code" htmlFor="totp-code">
                <Input id="totp-code" inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))} />
              </Field>
              <ErrorBox error={confirm.error} />
              <div>
                <Button type="submit" variant="primary" busy={confirm.isPending} disabled={code.length !== 6}>
                  Turn TOTP on
                </Button>
              </div>
            </form>
          ) : null}
          {totpOn ? (
            <form
              className="flex flex-col gap-3"
              onSubmit={(e) => {
                e.preventDefault();
                disable.mutate();
              }}
            >
              <Field label="Current code (to turn it off)" htmlFor="totp-off">
                <Input id="totp-off" inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))} />
              </Field>
              <ErrorBox error={disable.error} />
              <div>
                <Button type="submit" variant="danger" busy={disable.isPending} disabled={code.length !== 6}>
                  Turn TOTP off
                </Button>
              </div>
            </form>
          ) : null}
        </Card>
      </div>
    </div>
  );
}

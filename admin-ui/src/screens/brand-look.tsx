import { useEffect, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { FieldError, invalidProps, unplaced } from '../components/field-error.tsx';
import { Button, Card, ErrorBox, Field, Input, Notice } from '../components/ui.tsx';

interface LookBrand {
  id: number;
  name: string;
  primary_color: string | null;
  support_phone: string | null;
  support_email: string | null;
  logo: { url: string; content_type: string; width: number; height: number; bytes: number } | null;
}

/** The file as base64 (without the data: prefix), read in the browser. */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('could not read the file'));
    reader.readAsDataURL(file);
  });
}

const FIELDS = ['primary_color', 'support_phone', 'support_email'] as const;

/**
 * What customers see of the brand on the checkout (README, "Checkout languages
 * and branding"): logo, colour, support contact. The server checks everything
 * (type by magic bytes, size, dimensions, colour); this form shows its answers.
 */
export function BrandLookCard({ brand, editable }: { brand: LookBrand; editable: boolean }) {
  const queryClient = useQueryClient();
  const [color, setColor] = useState(brand.primary_color ?? '');
  const [phone, setPhone] = useState(brand.support_phone ?? '');
  const [email, setEmail] = useState(brand.support_email ?? '');
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    setColor(brand.primary_color ?? '');
    setPhone(brand.support_phone ?? '');
    setEmail(brand.support_email ?? '');
  }, [brand.id, brand.primary_color, brand.support_phone, brand.support_email]);
  // Another brand chosen: the last brand's notice is not about this one.
  useEffect(() => setNotice(null), [brand.id]);

  const refresh = () => queryClient.invalidateQueries({ queryKey: ['brands'] });
  const save = useMutation({
    mutationFn: async () =>
      (
        await ok(
          api.brands.update({
            params: { brand_id: String(brand.id) },
            body: { primary_color: color.trim() || null, support_phone: phone.trim() || null, support_email: email.trim() || null },
          }),
        )
      ).data,
    onSuccess: async () => {
      setNotice('Checkout look saved.');
      await refresh();
    },
  });
  const upload = useMutation({
    mutationFn: async (file: File) => (await ok(api.brands.setLogo({ params: { brand_id: String(brand.id) }, body: { content_base64: await readBase64(file) } }))).data,
    onSuccess: async () => {
      setNotice('Logo uploaded.');
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: async () => (await ok(api.brands.deleteLogo({ params: { brand_id: String(brand.id) } }))).data,
    onSuccess: async () => {
      setNotice('Logo removed.');
      await refresh();
    },
  });

  return (
    <Card title={`Checkout look of ${brand.name}`}>
      <div className="flex flex-col gap-3">
        {notice ? <Notice>{notice}</Notice> : null}
        <div className="flex items-center gap-3">
          {brand.logo ? (
            <img src={brand.logo.url} alt={`${brand.name} logo`} className="h-12 w-auto max-w-[120px] rounded border border-slate-200 object-contain" data-testid="brand-logo" />
          ) : (
            <span className="text-sm text-slate-600">No logo: the checkout shows the name's first letter.</span>
          )}
          {brand.logo ? (
            <span className="text-xs text-slate-600">
              {brand.logo.content_type}, {brand.logo.width}×{brand.logo.height} px, {Math.ceil(brand.logo.bytes / 1024)} KB
            </span>
          ) : null}
        </div>
        {editable ? (
          <>
            <Field label="Logo (PNG, JPEG or WebP; at most 64 KB, 16–2048 px a side; SVG is not accepted)" htmlFor="brand-logo-file">
              <input
                id="brand-logo-file"
                type="file"
                accept="image/png,image/jpeg,image/webp"
                className="text-sm"
                {...invalidProps(upload.error, 'content_base64', 'brand-logo-file')}
                onChange={(e) => {
                  const file = e.target.files?.[0];
                  if (file) upload.mutate(file);
                  e.target.value = '';
                }}
              />
            </Field>
            <FieldError error={upload.error} field="content_base64" id="brand-logo-file" />
            <ErrorBox error={unplaced(upload.error, ['content_base64']) ?? remove.error} />
            {brand.logo ? (
              <div>
                <Button variant="danger" busy={remove.isPending} onClick={() => remove.mutate()}>
                  Remove logo
                </Button>
              </div>
            ) : null}
            <form
              className="flex flex-col gap-3"
              onSubmit={(e) => {
                e.preventDefault();
                save.mutate();
              }}
            >
              <Field label="Primary colour (#rrggbb; empty: the default blue)" htmlFor="brand-color" hint="Buttons get white or dark text, whichever reads better.">
                <div className="flex items-center gap-2">
                  <Input id="brand-color" value={color} maxLength={7} placeholder="#1f5eff" onChange={(e) => setColor(e.target.value)} {...invalidProps(save.error, 'primary_color', 'brand-color')} />
                  <input type="color" aria-label="Pick the primary colour" value={/^#[0-9a-fA-F]{6}$/.test(color) ? color : '#1f5eff'} onChange={(e) => setColor(e.target.value)} />
                </div>
              </Field>
              <FieldError error={save.error} field="primary_color" id="brand-color" />
              <Field label="Support phone (optional)" htmlFor="brand-support-phone">
                <Input id="brand-support-phone" type="tel" value={phone} maxLength={32} onChange={(e) => setPhone(e.target.value)} {...invalidProps(save.error, 'support_phone', 'brand-support-phone')} />
              </Field>
              <FieldError error={save.error} field="support_phone" id="brand-support-phone" />
              <Field label="Support e-mail (optional)" htmlFor="brand-support-email">
                <Input id="brand-support-email" type="email" value={email} maxLength={254} onChange={(e) => setEmail(e.target.value)} {...invalidProps(save.error, 'support_email', 'brand-support-email')} />
              </Field>
              <FieldError error={save.error} field="support_email" id="brand-support-email" />
              <ErrorBox error={unplaced(save.error, FIELDS)} />
              <div>
                <Button type="submit" variant="primary" busy={save.isPending}>
                  Save checkout look
                </Button>
              </div>
            </form>
          </>
        ) : (
          <dl className="text-sm">
            <dt className="font-medium">Primary colour</dt>
            <dd>{brand.primary_color ?? 'default'}</dd>
            <dt className="font-medium">Support</dt>
            <dd>{[brand.support_phone, brand.support_email].filter(Boolean).join(' · ') || 'none'}</dd>
          </dl>
        )}
      </div>
    </Card>
  );
}

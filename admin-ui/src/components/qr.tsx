import { useEffect, useState } from 'react';
import QRCode from 'qrcode';

/**
 * A QR code as an SVG data: URL in an <img> (the CSP allows `img-src data:`),
 * drawn by the `qrcode` package the service already uses for payment links.
 */
export function QrImage({ text, label, size = 192 }: { text: string; label: string; size?: number }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
      .then((svg) => live && setSrc(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`))
      .catch(() => live && setSrc(null));
    return () => {
      live = false;
    };
  }, [text]);
  return src ? <img src={src} alt={label} width={size} height={size} className="rounded bg-white" data-testid="qr" /> : <span className="text-sm text-slate-600">Drawing the QR code…</span>;
}

/** A QR code drawn on a canvas (npm `qrcode`, bundled), with the text it holds beside it for copying. */
import { useEffect, useRef, useState } from 'preact/hooks';
import QRCode from 'qrcode';

export function Qr({ text, label }: { text: string; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    if (!canvas.current) return;
    QRCode.toCanvas(canvas.current, text, { errorCorrectionLevel: 'M', margin: 4, scale: 6 }).then(
      () => setError(''),
      (e: unknown) => setError(String(e)),
    );
  }, [text]);
  return (
    <figure class="qr">
      <canvas ref={canvas} role="img" aria-label={label} data-qr={text} />
      {error && <figcaption class="error">{error}</figcaption>}
    </figure>
  );
}

/** QR codes of the provisioning URL for a portal to show (PNG and SVG, qrcode package). */
import QRCode from 'qrcode';

const OPTS = { errorCorrectionLevel: 'M' as const, margin: 2 };

export async function qrPng(text: string): Promise<Buffer> {
  return QRCode.toBuffer(text, { ...OPTS, type: 'png', width: 320 });
}

export async function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { ...OPTS, type: 'svg' });
}

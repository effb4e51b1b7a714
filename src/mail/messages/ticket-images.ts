import QRCode from 'qrcode';
import type { MailAttachment } from '../outgoing-mail.js';

/** Pixels of the QR image; shown at half this size in the mail, sharp on high-density screens. */
export const QR_PIXELS = 440;

/** A check-in code as a PNG QR image, attached inline under `cid`. */
export async function ticketImage(ticketCode: string, cid: string, index: number): Promise<MailAttachment> {
  const content = await QRCode.toBuffer(ticketCode, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: QR_PIXELS });
  return { filename: `check-in-code-${index}.png`, content, contentType: 'image/png', cid };
}

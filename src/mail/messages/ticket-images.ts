import QRCode from 'qrcode';
import type { MailAttachment } from '../outgoing-mail.js';

/**
 * A check-in code as a PNG QR image, attached inline under `cid`. Three pixels a module (about 330 px
 * for a signed code), shown at 220 px in the mail: sharp on high-density screens. Grey-scale with one
 * fixed row filter keeps the file near 5 KB and the encoding quick.
 */
export async function ticketImage(ticketCode: string, cid: string, index: number): Promise<MailAttachment> {
  // One byte-mode segment: a signed code is base64url text, and the library's search for the best mix of
  // modes costs a third of the time for nothing.
  const content = await QRCode.toBuffer([{ data: Buffer.from(ticketCode, 'ascii'), mode: 'byte' }], {
    type: 'png',
    errorCorrectionLevel: 'M',
    margin: 4,
    scale: 3,
    // pngjs options; @types/qrcode does not list them.
    rendererOpts: { colorType: 0, filterType: 2 } as QRCode.QRCodeToBufferOptions['rendererOpts'],
  });
  return { filename: `check-in-code-${index}.png`, content, contentType: 'image/png', cid };
}

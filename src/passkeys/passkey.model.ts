/** A passkey as its owner sees it on the security page. */
export interface Passkey {
  id: string;
  name: string;
  /** `singleDevice`: a security key or one device's own (amr `hwk`); `multiDevice`: synced between devices (amr `swk`). */
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const NOTIFICATION_RESPONSE = 0x41; // 'A'
const COMMAND_COMPLETE = 0x43; // 'C'
const READY_FOR_QUERY = 0x5a; // 'Z'
const HEADER_LENGTH = 5; // type byte, then an Int32 length that counts itself

export interface ProtocolTapHandlers {
  /** A NotificationResponse, whole; true takes it out of the stream. Called before any later byte is forwarded. */
  notification(channel: string, payload: string): boolean;
  /** A ReadyForQuery's transaction status: `I` idle, `T` in a transaction block, `E` in a failed one. Called before its status byte is forwarded. */
  ready(status: string): void;
  /** A CommandComplete's tag (`COMMIT`, `INSERT 0 1`), once whole and before any later byte is forwarded; the message itself is forwarded as it comes. */
  complete?(tag: string): void;
  /** Every message's type byte (`E` for an ErrorResponse), once its header is read. */
  message?(type: string): void;
}

/**
 * Follows a PostgreSQL backend's output as it streams to a client, in chunks that may split messages
 * anywhere: notifications are held back until whole, handed to `notification` and kept or taken out;
 * every other byte is forwarded as it comes, in as few pieces as the chunks it arrived in. Chunks may be
 * views into memory that is reused once `feed` returns (PGlite's wasm heap): whatever is kept is copied.
 */
export class ProtocolTap {
  private readonly header = new Uint8Array(HEADER_LENGTH);
  private readonly headerView = new DataView(this.header.buffer);
  private headerRead = 0;
  private bodyLeft = 0;
  /** The message being read is a notification: its bytes are held back, not forwarded. */
  private holding = false;
  /** The held notification, header included, once its length is known. */
  private held?: { bytes: Uint8Array; filled: number };
  /** The CommandComplete being read: a copy of its body, forwarded all the same. */
  private tag?: { bytes: Uint8Array; filled: number };
  private readyStatusNext = false;
  private readonly decoder = new TextDecoder();

  constructor(private readonly handlers: ProtocolTapHandlers) {}

  /** True between messages: a backend that has flushed its output leaves the tap here. */
  get atMessageBoundary(): boolean {
    return this.headerRead === 0 && this.bodyLeft === 0;
  }

  /** Forgets a partly read message (after output that did not end on a message boundary). */
  reset(): void {
    this.headerRead = 0;
    this.bodyLeft = 0;
    this.holding = false;
    this.held = undefined;
    this.tag = undefined;
    this.readyStatusNext = false;
  }

  feed(chunk: Uint8Array, forward: (bytes: Uint8Array) => void): void {
    // Start of the bytes of this chunk not forwarded yet; none of them belongs to a held notification.
    let from = 0;
    let i = 0;
    while (i < chunk.length) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, chunk.length - i);
        const copy = this.held ?? this.tag;
        if (copy) {
          copy.bytes.set(chunk.subarray(i, i + n), copy.filled);
          copy.filled += n;
        } else if (this.readyStatusNext) {
          this.readyStatusNext = false;
          this.handlers.ready(String.fromCharCode(chunk[i]!));
        }
        i += n;
        this.bodyLeft -= n;
        if (this.bodyLeft === 0) {
          if (this.held) from = this.judge(i, forward);
          else if (this.tag) this.completed();
        }
        continue;
      }
      if (this.headerRead === 0) {
        this.holding = chunk[i] === NOTIFICATION_RESPONSE;
        if (this.holding && i > from) forward(chunk.subarray(from, i));
      }
      this.header[this.headerRead++] = chunk[i++]!;
      if (this.headerRead < HEADER_LENGTH) continue;
      this.headerRead = 0;
      this.bodyLeft = this.headerView.getInt32(1) - 4;
      this.handlers.message?.(String.fromCharCode(this.header[0]!));
      if (this.holding) {
        const bytes = new Uint8Array(HEADER_LENGTH + this.bodyLeft);
        bytes.set(this.header);
        this.held = { bytes, filled: HEADER_LENGTH };
        if (this.bodyLeft === 0) from = this.judge(i, forward);
      } else if (this.header[0] === READY_FOR_QUERY) this.readyStatusNext = this.bodyLeft > 0;
      else if (this.header[0] === COMMAND_COMPLETE && this.handlers.complete) {
        this.tag = { bytes: new Uint8Array(this.bodyLeft), filled: 0 };
        if (this.bodyLeft === 0) this.completed();
      }
    }
    if (!this.holding && from < chunk.length) forward(from === 0 ? chunk : chunk.subarray(from));
  }

  /** The held notification is whole: hand it over, forward it unless taken. Returns where forwarding resumes. */
  private judge(resumeAt: number, forward: (bytes: Uint8Array) => void): number {
    const { bytes } = this.held!;
    this.held = undefined;
    this.holding = false;
    const channelEnd = bytes.indexOf(0, HEADER_LENGTH + 4);
    const payloadEnd = bytes.indexOf(0, channelEnd + 1);
    const channel = this.decoder.decode(bytes.subarray(HEADER_LENGTH + 4, channelEnd));
    const payload = this.decoder.decode(bytes.subarray(channelEnd + 1, payloadEnd));
    if (!this.handlers.notification(channel, payload)) forward(bytes);
    return resumeAt;
  }

  private completed(): void {
    const { bytes } = this.tag!;
    this.tag = undefined;
    const end = bytes.indexOf(0);
    this.handlers.complete!(this.decoder.decode(end === -1 ? bytes : bytes.subarray(0, end)));
  }
}

import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

export const SMTP_PASSWORD = 'pa55-w0rd-never-shown';

export interface Arrival {
  from: string;
  to: string[];
  user: string | undefined;
  /** The client's port: which connection (and so which process) delivered it. */
  remotePort: number;
  mail: ParsedMail;
}

export interface TestSmtpServer {
  arrivals: Arrival[];
  /** DATA commands answered so far (refused ones included). */
  tries(): number;
  /** Answers the next DATA commands with these replies (then 250 again). */
  refuseNext(...replies: { code: number; message: string }[]): void;
  /**
   * Receives the next `count` messages whole and never answers them: a server hung after the client's
   * final dot. Nothing of them arrives (no 250 was sent); `held()` counts them.
   */
  stallNext(count?: number): void;
  /** DATA commands received and left unanswered by `stallNext` so far. */
  held(): number;
  /**
   * Answers every DATA this long after the message was received (a slow server); 0 again: at once. A
   * message whose client hangs up before the answer does not arrive (it was never accepted).
   */
  answerAfter(ms: number): void;
  /** Messages received and not answered yet (delayed or held), whose client is still connected. */
  pending(): number;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A real SMTP server in the test process that wants a login (smtp-server); what arrives is parsed with mailparser. */
export async function startSmtpServer(replies: { code: number; message: string }[] = [], port = 0): Promise<TestSmtpServer> {
  const arrivals: Arrival[] = [];
  let tries = 0;
  let stalls = 0;
  let held = 0;
  let delayMs = 0;
  /** Sessions whose message waits for its answer. */
  const waiting = new Set<string>();
  const server = new SMTPServer({
    logger: false,
    closeTimeout: 1000,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'agora' && auth.password === SMTP_PASSWORD) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      void simpleParser(stream, { keepCidLinks: true }).then((mail) => {
        if (stalls > 0) {
          stalls -= 1;
          held += 1;
          waiting.add(session.id);
          return;
        }
        const answer = () => {
          waiting.delete(session.id);
          tries += 1;
          const reply = replies.shift();
          if (reply) return callback(Object.assign(new Error(reply.message), { responseCode: reply.code }));
          arrivals.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user,
            remotePort: session.remotePort,
            mail,
          });
          callback();
        };
        if (delayMs === 0) return answer();
        waiting.add(session.id);
        setTimeout(() => {
          if (waiting.has(session.id)) answer(); // else the client hung up: never accepted
        }, delayMs);
      });
    },
    onClose(session) {
      waiting.delete(session.id);
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  return {
    arrivals,
    tries: () => tries,
    refuseNext: (...next) => replies.push(...next),
    stallNext: (count = 1) => (stalls += count),
    held: () => held,
    answerAfter: (ms) => (delayMs = ms),
    pending: () => waiting.size,
    url: `smtp://agora:${SMTP_PASSWORD}@127.0.0.1:${bound}`,
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

export const SMTP_PASSWORD = 'pa55-w0rd-never-shown';

export interface Arrival {
  from: string;
  to: string[];
  user: string | undefined;
  mail: ParsedMail;
}

export interface TestSmtpServer {
  arrivals: Arrival[];
  /** DATA commands answered so far (refused ones included). */
  tries(): number;
  /** Answers the next DATA commands with these replies (then 250 again). */
  refuseNext(...replies: { code: number; message: string }[]): void;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A real SMTP server in the test process that wants a login (smtp-server); what arrives is parsed with mailparser. */
export async function startSmtpServer(replies: { code: number; message: string }[] = [], port = 0): Promise<TestSmtpServer> {
  const arrivals: Arrival[] = [];
  let tries = 0;
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'agora' && auth.password === SMTP_PASSWORD) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      void simpleParser(stream, { keepCidLinks: true }).then((mail) => {
        tries += 1;
        const reply = replies.shift();
        if (reply) return callback(Object.assign(new Error(reply.message), { responseCode: reply.code }));
        arrivals.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user,
          mail,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  return {
    arrivals,
    tries: () => tries,
    refuseNext: (...next) => replies.push(...next),
    url: `smtp://agora:${SMTP_PASSWORD}@127.0.0.1:${bound}`,
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Loopback IP hosts on which a redirect URI registered without a port allows any port (RFC 8252 §7.3). */
const LOOPBACK_IP = new Set(['127.0.0.1', '[::1]']);

/**
 * The browser origins a public client's redirect URIs name: its single-page app runs there. A private-use
 * scheme names none; an http loopback IP URI written without a port (`http://127.0.0.1/callback`) names
 * that address on every port, as redirect URIs match on any port there.
 */
export class AllowedOrigins {
  private readonly exact = new Set<string>();
  /** `http://127.0.0.1` or `http://[::1]`, on any port. */
  private readonly anyPort = new Set<string>();

  constructor(redirectUris: Iterable<string>) {
    for (const uri of redirectUris) {
      let url: URL;
      try {
        url = new URL(uri);
      } catch {
        continue;
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') continue;
      if (url.protocol === 'http:' && LOOPBACK_IP.has(url.hostname) && !hasExplicitPort(uri, url))
        this.anyPort.add(`http://${url.hostname}`);
      else this.exact.add(url.origin);
    }
  }

  /** Whether `origin`, an `Origin` header as browsers send it (`scheme://host[:port]`), is allowed. */
  allows(origin: string): boolean {
    if (this.exact.has(origin)) return true;
    if (!origin.startsWith('http://')) return false;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    return url.origin === origin && this.anyPort.has(`http://${url.hostname}`);
  }

  get size(): number {
    return this.exact.size + this.anyPort.size;
  }
}

/** `new URL` drops a default port (`:80`), so look at what was written. */
function hasExplicitPort(uri: string, url: URL): boolean {
  return url.port !== '' || uri.slice(url.protocol.length + 2).startsWith(`${url.hostname}:`);
}

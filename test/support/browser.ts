/** A cookie-keeping HTTP client that follows nothing by itself: enough to drive sign-in and consent pages. */
export class Browser {
  private readonly origin: string;

  /**
   * `site` is the public address the server knows itself by (BASE_URL), where forms are posted from;
   * it differs from `baseUrl` when the browser talks to one instance of several behind that address.
   */
  constructor(
    private readonly baseUrl: string,
    site = baseUrl,
    private readonly cookies = new Map<string, string>(),
  ) {
    this.origin = new URL(site).origin;
  }

  /** The same browser, its cookies included, sent to another instance of the site (as a load balancer would). */
  at(baseUrl: string): Browser {
    return new Browser(baseUrl, this.origin, this.cookies);
  }

  async get(path: string): Promise<Response> {
    return this.request(path, { method: 'GET' });
  }

  async post(path: string, form: Record<string, string> | URLSearchParams, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.origin, ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** Posts a form and follows the site's redirect (post/redirect/get) to the page it leads to. */
  async submit(path: string, form: Record<string, string> | URLSearchParams): Promise<{ posted: Response; page: Response; html: string }> {
    const posted = await this.post(path, form);
    const { res: page } = await this.follow(posted);
    return { posted, page, html: page === posted ? '' : await page.text() };
  }

  /** Follows redirects within this site; stops at the first one leaving it (the client's redirect URI). */
  async follow(res: Response): Promise<{ res: Response; external?: string }> {
    let current = res;
    for (let hops = 0; hops < 10 && current.status >= 300 && current.status < 400; hops++) {
      const location = new URL(current.headers.get('location')!, this.baseUrl);
      if (location.origin !== new URL(this.baseUrl).origin && location.origin !== this.origin)
        return { res: current, external: location.toString() };
      current = await this.get(location.pathname + location.search);
    }
    return { res: current };
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private async request(path: string, init: RequestInit): Promise<Response> {
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    // A header given as '' is left out (a request without Origin, say).
    const headers = Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>).filter(([, v]) => v !== ''));
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...headers, ...(cookie ? { cookie } : {}) } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name!.trim());
      else this.cookies.set(name!.trim(), value.join('='));
    }
    return res;
  }
}

/** The hidden and named inputs of the first form on a page. */
export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) {
    fields[match[1]!] = match[2]!
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  }
  return fields;
}

/** Signs in through the sign-in page as a person would; returns where the site sent the browser next. */
export async function signIn(browser: Browser, login: string, password: string, returnTo = '/'): Promise<Response> {
  const form = await browser.get(`/sign-in?return_to=${encodeURIComponent(returnTo)}`);
  const fields = formFields(await form.text());
  return browser.post('/sign-in', { ...fields, login, password });
}

/** Small request builders for API tests: real HTTP through fetch. */

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Credentials {
  privateToken?: string;
  bearer?: string;
  headers?: Record<string, string>;
}

function authHeaders(credentials: Credentials = {}): Record<string, string> {
  const headers: Record<string, string> = { ...credentials.headers };
  if (credentials.privateToken !== undefined) headers['private-token'] = credentials.privateToken;
  if (credentials.bearer !== undefined) headers.authorization = `Bearer ${credentials.bearer}`;
  return headers;
}

async function toResponse<T>(res: Response): Promise<ApiResponse<T>> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body: body as T, text };
}

export interface GraphqlBody {
  data?: Record<string, any> | null;
  errors?: { message: string; extensions?: Record<string, any>; path?: string[] }[];
  message?: string;
  error?: string;
}

/** POST /graphql with a JSON body. */
export async function graphql(
  baseUrl: string,
  query: string,
  options: Credentials & { variables?: Record<string, unknown>; operationName?: string; path?: string } = {},
): Promise<ApiResponse<GraphqlBody>> {
  const res = await fetch(`${baseUrl}${options.path ?? '/graphql'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders(options) },
    body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName }),
  });
  return toResponse<GraphqlBody>(res);
}

export async function get<T = Record<string, unknown>>(baseUrl: string, path: string, credentials?: Credentials): Promise<ApiResponse<T>> {
  return toResponse<T>(await fetch(`${baseUrl}${path}`, { headers: authHeaders(credentials) }));
}

/** A legacy REST call: JSON in, JSON out, with the same credentials as GraphQL. */
export async function rest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: Credentials & { body?: unknown } = {},
): Promise<ApiResponse<T>> {
  const headers = authHeaders(options);
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return toResponse<T>(
    await fetch(`${baseUrl}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) }),
  );
}

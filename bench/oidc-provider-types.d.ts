// The little of node-oidc-provider 9 (a dev dependency without type declarations) the token peer uses.
declare module 'oidc-provider' {
  interface Model {
    save(): Promise<string>;
  }
  interface Grant extends Model {
    addOIDCScope(scope: string): void;
  }
  interface Client {
    clientId: string;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    Client: { find(id: string): Promise<Client | undefined> };
    Grant: new (properties: { accountId: string; clientId: string }) => Grant;
    AuthorizationCode: new (properties: Record<string, unknown>) => Model;
    listen(port: number, host: string): unknown;
  }
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  /** The built-in in-memory adapter; its default storage is an LRU of 1,000 entries. */
  export default class MemoryAdapter {
    constructor(
      model: string,
      store?: { get(key: string): unknown; set(key: string, value: unknown): unknown; delete(key: string): unknown },
    );
  }
}

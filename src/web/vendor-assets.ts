import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Third-party browser files the pages load, served from our own node_modules (no CDN). Each entry is
 * one exact file of one package; nothing else under node_modules can be reached. The packages' export
 * maps do not list these UMD files, so they are found beside each package's package.json.
 */
const VENDOR_FILES = {
  'react.js': { pkg: 'react', file: 'umd/react.production.min.js' },
  'react-dom.js': { pkg: 'react-dom', file: 'umd/react-dom.production.min.js' },
  'graphiql.js': { pkg: 'graphiql', file: 'graphiql.min.js' },
  'graphiql.css': { pkg: 'graphiql', file: 'graphiql.min.css' },
} as const;

export type VendorFile = keyof typeof VENDOR_FILES;

export interface VendorAsset {
  /** The public name, with the package version in it, so the file can be cached for good. */
  name: string;
  path: string;
  contentType: string;
}

const CONTENT_TYPES = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

const require = createRequire(import.meta.url);

function locate(key: VendorFile): VendorAsset {
  const { pkg, file } = VENDOR_FILES[key];
  const packageJson = require.resolve(`${pkg}/package.json`);
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  const [base, ext] = key.split('.') as [string, keyof typeof CONTENT_TYPES];
  return { name: `${base}-${version}.${ext}`, path: join(dirname(packageJson), file), contentType: CONTENT_TYPES[ext] };
}

let located: Map<VendorFile, VendorAsset> | undefined;

function assets(): Map<VendorFile, VendorAsset> {
  located ??= new Map((Object.keys(VENDOR_FILES) as VendorFile[]).map((key) => [key, locate(key)]));
  return located;
}

/** The address a page links to, e.g. `/assets/vendor/graphiql-3.9.0.js`. */
export function vendorUrl(key: VendorFile): string {
  return `/assets/vendor/${assets().get(key)!.name}`;
}

/** The vendor file published under this public name, if any. */
export function vendorAsset(name: string): VendorAsset | undefined {
  for (const asset of assets().values()) if (asset.name === name) return asset;
  return undefined;
}

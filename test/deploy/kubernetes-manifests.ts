import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../support/processes.js';

/** deploy/kubernetes, read as the deploy tier's tests see it. */
export const KUBERNETES_DIR = join(ROOT, 'deploy/kubernetes');

export interface Manifest {
  file: string;
  object: any;
}

/** Every object of every manifest but the kustomization, with the file it came from. */
export const manifests: Manifest[] = readdirSync(KUBERNETES_DIR)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(KUBERNETES_DIR, file), 'utf8')).map((doc) => {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return { file, object: doc.toJS() };
    }),
  );

/** The one object of this kind (fails the test when there are none or several). */
export const one = (kind: string) => {
  const found = manifests.filter((m) => m.object.kind === kind);
  expect(found).toHaveLength(1);
  return found[0]!.object;
};

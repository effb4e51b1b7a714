/** Reading the Prometheus text format in tests. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`Not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample with exactly these labels (0 when absent, as a counter not yet incremented). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const found = samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted);
  return found?.value ?? 0;
}

/** The label sets of one metric's samples. */
export function seriesOf(samples: Sample[], name: string): Record<string, string>[] {
  return samples.filter((s) => s.name === name).map((s) => s.labels);
}

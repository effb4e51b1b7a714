import { startTestApp } from './support/test-app.js';
it('starts', async () => {
  const s = Date.now();
  const t = await startTestApp();
  const started = Date.now() - s;
  await t.close();
  console.log(`start ${started} ms, close ${Date.now() - s - started} ms`);
});

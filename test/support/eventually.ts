/** Runs `probe` until it stops throwing (an assertion that holds), then gives its value; its last error after `limitMs`. */
export async function eventually<T>(probe: () => T | Promise<T>, limitMs = 20_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

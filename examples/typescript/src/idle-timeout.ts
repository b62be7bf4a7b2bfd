// An async iterable that fails when its source sends nothing for `ms` milliseconds.
export async function* withIdleTimeout<T>(
  source: AsyncIterable<T>,
  ms: number,
  onTimeout: () => void,
): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        onTimeout();
        reject(new Error(`stream idle for ${ms} ms: the connection stalled`));
      }, ms);
    });
    let next: IteratorResult<T>;
    try {
      next = await Promise.race([iterator.next(), idle]);
    } finally {
      clearTimeout(timer);
    }
    if (next.done) return;
    yield next.value;
  }
}

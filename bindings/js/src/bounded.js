// Reading a byte stream within a bound: every read of bytes a server or an
// issuer sends goes through here, so no answer is held past its limit
// before anything parses it (issue 10: bound every read before parsing).

/**
 * Passes on stream's chunks while measure(chunk), the size of the frame in
 * progress once the chunk is taken, stays within cap. Past it the source is
 * cancelled, nothing more is passed on, and the stream errors with what
 * over() returns: whoever reads it (the capture, the MCP SDK) never holds a
 * frame longer than cap plus one chunk. end() runs when the source ends.
 * @param {ReadableStream<Uint8Array>} stream
 * @param {number} cap
 * @param {{measure: (chunk: Uint8Array) => number, over: () => Error, end?: () => void}} how
 * @returns {ReadableStream<Uint8Array>}
 */
export function capped(stream, cap, { measure, over, end }) {
  const reader = stream.getReader();
  return new ReadableStream({
    async pull(ctl) {
      let r;
      try {
        r = await reader.read();
      } catch (e) {
        ctl.error(e);
        return;
      }
      if (r.done) {
        end?.();
        ctl.close();
        return;
      }
      if (measure(r.value) > cap) {
        reader.cancel().catch(() => {});
        ctl.error(over());
        return;
      }
      ctl.enqueue(r.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Reads stream to its end, or until more than cap bytes have come: bytes
 * holds at most cap of them, over says whether there were more (the rest
 * is not read).
 * @param {ReadableStream<Uint8Array>|null} stream
 * @param {number} cap
 * @returns {Promise<{bytes: Uint8Array, over: boolean}>}
 */
export async function readCapped(stream, cap) {
  const parts = [];
  let n = 0;
  let over = false;
  if (stream) {
    const tooMuch = new Error("over the cap");
    try {
      for await (const chunk of capped(stream, cap, { measure: (c) => n + c.length, over: () => tooMuch })) {
        parts.push(chunk);
        n += chunk.length;
      }
    } catch (e) {
      if (e !== tooMuch) throw e;
      over = true;
    }
  }
  const bytes = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, over };
}

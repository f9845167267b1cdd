// Bounded reads of the files the SDK is given a path to (the lockfile, the
// record log, the issuer replay state), as bindings/go/preflight's
// readFile/readRegular: a regular file of at most a limit, refused by its
// size before a byte is read. A device or a FIFO (/dev/zero, /dev/full, a
// pipe) would otherwise be read without bound, or block the process before
// any check.

import { CrawlcheckError } from "./errors.js";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";


/** The bytes of the regular file at path, of at most limit bytes. */
export function readRegularFile(path, limit) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    return readRegular(fd, String(path), limit);
  } finally {
    closeSync(fd);
  }
}

/** The bytes of an open file, from its start, refused unless it is a regular file of at most limit bytes. */
export function readRegular(fd, name, limit) {
  const st = fstatSync(fd);
  if (!st.isFile()) throw new CrawlcheckError(`${name} is not a regular file (${kindOf(st)})`);
  if (st.size > limit) throw new CrawlcheckError(`${name} holds ${st.size} bytes, more than the ${limit} this reads`);
  // One byte more than the limit: a file that grows while it is read is caught.
  const buf = Buffer.alloc(Math.min(st.size, limit) + 1);
  let at = 0;
  for (;;) {
    const n = readSync(fd, buf, at, buf.length - at, at);
    if (n === 0) break;
    at += n;
    if (at > limit) throw new CrawlcheckError(`${name} grew past ${limit} bytes while it was read`);
    if (at === buf.length) break;
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, at);
}

function kindOf(st) {
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isDirectory()) return "a directory";
  return "not a regular file";
}

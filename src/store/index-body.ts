// How the index stores its large text columns (entry JSON, analyses): packed on the way in and
// unpacked on the way out by every module that writes or reads them, so both ends agree.
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Entry JSON and analyses are kept deflated (fast level) in an index file: they are most of its
 * bytes, and a row that fits a page several times over keeps lookups to one page read.
 */
export function deflate(text: string): Buffer {
  return deflateRawSync(text, { level: 1 });
}

/**
 * {@link deflate}'s bytes in a buffer of their own, for a body sent to another thread: zlib's
 * result is a view of a 16 KB buffer, and a structured clone copies the whole buffer (a
 * thousand-turn round of analyses crossed threads as 32 MB instead of about 1 MB).
 */
export function deflateToSend(text: string): Uint8Array {
  return new Uint8Array(deflate(text));
}

/** A stored body: a deflated BLOB in an index file, TEXT in an uncompressed (in-memory) index. */
export type StoredBody = Buffer | string;

/**
 * A stored body as text. An index that is never written to disk (a database store's in-memory
 * mirror) keeps bodies as plain TEXT, which SQLite returns as a string; a file keeps BLOBs.
 */
export function unpack(body: StoredBody): string {
  return typeof body === 'string' ? body : inflateRawSync(body).toString('utf8');
}

/** How an index packs a body: {@link deflate}, or as it is (an uncompressed index). */
export type PackBody = (text: string) => StoredBody;

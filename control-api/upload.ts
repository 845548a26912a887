/**
 * multipart/form-data uploads for routes declared with `rawBody: true` (storage files, agent files):
 * one file part plus short text fields, read with busboy under a size cap. Every way a client can get
 * it wrong answers in the error envelope, and nothing is kept of a refused upload.
 */
import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError, invalidArgument } from '../core/errors';

export interface UploadedFile {
  /** The part's file name, reduced to a plain name (no directories). */
  filename: string;
  contentType: string;
  data: Buffer;
  /** The text fields sent beside the file. */
  fields: Record<string, string>;
}

export interface UploadOptions {
  /** Largest file accepted, bytes. */
  maxBytes: number;
  /** Name of the file part (default `file`). */
  fileField?: string;
  /** Most text fields accepted (default 20), each at most 4 KiB. */
  maxFields?: number;
}

/** Reads one multipart upload from `req`; 400 INVALID_ARGUMENT or 413 PAYLOAD_TOO_LARGE when it is not acceptable. */
export function readUpload(req: Request, opts: UploadOptions): Promise<UploadedFile> {
  const fileField = opts.fileField ?? 'file';
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type) || !/boundary=/i.test(type)) {
    return Promise.reject(invalidArgument('Content-Type must be multipart/form-data with a boundary', [{ field: 'Content-Type', issue: 'not multipart/form-data' }]));
  }
  return new Promise<UploadedFile>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 1, fileSize: opts.maxBytes, fields: opts.maxFields ?? 20, fieldSize: 4096, parts: (opts.maxFields ?? 20) + 1 } });
    } catch (e) {
      return reject(invalidArgument(`malformed multipart request: ${(e as Error).message}`));
    }
    const fields: Record<string, string> = {};
    let file: Omit<UploadedFile, 'fields'> | null = null;
    let failure: ApiError | null = null;
    let pending = 0;
    let finished = false;
    const fail = (e: ApiError) => {
      failure ??= e;
    };
    const settle = () => {
      if (!finished || pending > 0) return;
      if (failure) return reject(failure);
      if (!file) return reject(invalidArgument(`the upload has no file part named "${fileField}"`, [{ field: fileField, issue: 'missing' }]));
      if (file.data.length === 0) return reject(invalidArgument('the uploaded file is empty', [{ field: fileField, issue: 'empty' }]));
      resolve({ ...file, fields });
    };

    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(invalidArgument(`field ${name}: longer than 4096 bytes`, [{ field: name, issue: 'too long' }]));
      else fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      if (name !== fileField) {
        fail(invalidArgument(`unexpected file part "${name}" (the file goes in "${fileField}")`, [{ field: name, issue: 'unexpected file' }]));
        stream.resume();
        return;
      }
      pending++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      // a body cut short errors the part as well as the form: reported once, through the form
      stream.on('error', (e: Error) => fail(invalidArgument(`malformed multipart request: ${e.message}`)));
      stream.on('limit', () => fail(new ApiError('PAYLOAD_TOO_LARGE', `the file is larger than ${opts.maxBytes} bytes`, { details: [{ field: fileField, max_bytes: opts.maxBytes }] })));
      stream.on('close', () => {
        pending--;
        // browsers send a path on some systems; keep the last segment only
        const base = (info.filename ?? '').split(/[\\/]/).pop() ?? '';
        if (!base) fail(invalidArgument('the file part has no file name', [{ field: fileField, issue: 'no filename' }]));
        else file = { filename: base.slice(0, 255), contentType: info.mimeType || 'application/octet-stream', data: Buffer.concat(chunks) };
        settle();
      });
    });
    bb.on('filesLimit', () => fail(invalidArgument('only one file per upload', [{ field: fileField, issue: 'more than one file' }])));
    bb.on('fieldsLimit', () => fail(invalidArgument('too many fields', [{ issue: 'too many fields' }])));
    bb.on('partsLimit', () => fail(invalidArgument('too many parts', [{ issue: 'too many parts' }])));
    bb.on('error', (e: Error) => {
      fail(invalidArgument(`malformed multipart request: ${e.message}`));
      finished = true;
      settle();
    });
    bb.on('close', () => {
      finished = true;
      settle();
    });
    req.on('aborted', () => {
      fail(invalidArgument('the upload was interrupted'));
      finished = true;
      settle();
    });
    req.pipe(bb);
  });
}

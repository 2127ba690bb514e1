import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/**
 * A declarative file's text, when it is a regular file: a FIFO (or a link to one, or to a device) would
 * block the whole process on its read, a start or a reload on a live service alike. Opened without
 * blocking and checked on the descriptor, so it cannot be swapped between the check and the read.
 */
export function readRegularFile(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new Error(`cannot be read: ${(error as Error).message}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error("not a regular file");
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

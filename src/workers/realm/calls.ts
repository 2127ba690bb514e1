import { isFunctionNotFound } from "../../shared/errors.ts";

/** The call's answer, or `fallback` when its worker is not running (a worker is optional). */
export async function optional<T>(pending: Promise<T>, fallback: T): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if (isFunctionNotFound(error)) return fallback;
    throw error;
  }
}

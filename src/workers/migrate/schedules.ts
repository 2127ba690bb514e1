/** A fixed interval as a cron expression, when one exists (whole seconds, minutes, hours or days). */
export function everyToCron(everyMs: number): string | undefined {
  const seconds = everyMs / 1000;
  if (!Number.isInteger(seconds) || seconds <= 0) return undefined;
  if (seconds < 60 && 60 % seconds === 0) return `*/${seconds} * * * * *`;
  const minutes = seconds / 60;
  if (Number.isInteger(minutes) && minutes < 60 && 60 % minutes === 0) return `*/${minutes} * * * *`;
  const hours = minutes / 60;
  if (Number.isInteger(hours) && hours < 24 && 24 % hours === 0) return `0 */${hours} * * *`;
  if (hours === 24) return "0 0 * * *";
  return undefined;
}

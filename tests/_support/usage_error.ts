/**
 * The UsageError a command-line parser throws, for tests that check its
 * message and exit code.
 *
 * @module
 */
import assert from "node:assert/strict";
import { UsageError } from "../../lib/cli/flags.ts";

/** The UsageError `run` throws, or a failure when it throws none. */
export function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail("no UsageError");
}

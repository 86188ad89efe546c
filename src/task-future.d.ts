/** A listener of a scheduled task: `error` null on success, with the task's result as `value`. */
export type TaskListener = (error: Error | null, value?: unknown) => void;

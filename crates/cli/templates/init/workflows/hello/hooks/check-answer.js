/**
 * After hook of `draft`: the move to review commits only when
 * scratchpad/answer.md holds some text. Otherwise the agent is told to write
 * it (a `correct` verdict) and stays in `draft`.
 */
import { defineHook } from "@archmax-ai/harness/sandbox";

export default defineHook(async ({ tools }) => {
  let text = "";
  try {
    text = await tools.readFile({ file_path: "scratchpad/answer.md" });
  } catch {
    text = "";
  }
  if (typeof text !== "string" || text.trim() === "" || text.startsWith("Error:")) {
    return { verdict: "correct", reason: "Write the answer to scratchpad/answer.md first." };
  }
  return { verdict: "ok" };
});

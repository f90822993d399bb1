/**
 * Refund decision check
 *
 * After hook of the `refund-request` state. It runs when the agent calls
 * archmax_advance out of that state and decides whether the move may commit.
 *
 * An advance to `escalation` passes at once: handing a case to a person needs
 * no decision file. Every other advance must be backed by a complete decision
 * in scratchpad/refund.json, checked in this order:
 *
 * 1. The file is read with tools.readFile. If it is missing, empty or not a
 *    JSON object, the verdict is correct: the agent is told to write it.
 * 2. The object must carry order_id (non-empty string), decision (one of
 *    full_refund, partial_refund, deny), amount (a number of at least 0) and
 *    reason (non-empty string). Every missing or malformed field is named in
 *    one correct verdict.
 * 3. order_id must equal the run variable order_id; a deny must have amount
 *    0; a deny may only be taken to `closed`, and a full or partial refund
 *    only to `refund-review` (a person approves every refund). Each mismatch
 *    is a correct verdict.
 * 4. The order is looked up in skills/order-data/assets/orders.json. An order
 *    id that is not there, or an amount above what the customer paid, is a
 *    veto: the proposal breaks policy, not just the file format.
 *
 * Anything else is ok. The state gives the hook two corrections
 * (max_iterations: 2); a third correct becomes a terminal failure that the
 * state's on_error sends to escalation. If the order data itself cannot be
 * read the hook throws, which fails closed the same way.
 */
import { defineHook } from "@archmax-ai/harness/sandbox";

const DECISION_FILE = "scratchpad/refund.json";
const ORDERS_FILE = "skills/order-data/assets/orders.json";
const DECISIONS = ["full_refund", "partial_refund", "deny"];

/** Reads a workspace file through the tools bridge; null when it is absent. */
async function readText(tools, filePath) {
  let text;
  try {
    text = await tools.readFile({ file_path: filePath, limit: 2000 });
  } catch {
    return null;
  }
  if (typeof text !== "string") return null;
  const trimmed = text.trim();
  if (trimmed === "" || trimmed.startsWith("Error:") || trimmed.startsWith("System reminder:")) {
    return null;
  }
  return trimmed;
}

/** Lists what is wrong with the decision object, one phrase per field. */
function fieldProblems(decision) {
  const problems = [];
  if (typeof decision.order_id !== "string" || decision.order_id.trim() === "") {
    problems.push("'order_id' (the order number, e.g. \"KK-2047\")");
  }
  if (!DECISIONS.includes(decision.decision)) {
    problems.push(`'decision' (one of ${DECISIONS.join(", ")})`);
  }
  if (typeof decision.amount !== "number" || !Number.isFinite(decision.amount) || decision.amount < 0) {
    problems.push("'amount' (a number in EUR, 0 for a deny)");
  }
  if (typeof decision.reason !== "string" || decision.reason.trim() === "") {
    problems.push("'reason' (the policy rule applied, in one sentence)");
  }
  return problems;
}

export default defineHook(async (input) => {
  if (input.to === "escalation") {
    return { verdict: "ok", reason: "escalation needs no refund decision" };
  }

  const raw = await readText(input.tools, DECISION_FILE);
  if (raw === null) {
    return {
      verdict: "correct",
      reason: `${DECISION_FILE} is missing or empty. Write the decision there before asking for review.`,
    };
  }

  let decision;
  try {
    decision = JSON.parse(raw);
  } catch {
    return { verdict: "correct", reason: `${DECISION_FILE} is not valid JSON. Rewrite it as one JSON object.` };
  }
  if (decision === null || typeof decision !== "object" || Array.isArray(decision)) {
    return { verdict: "correct", reason: `${DECISION_FILE} must hold one JSON object, not a list or a value.` };
  }

  const problems = fieldProblems(decision);
  if (problems.length > 0) {
    return {
      verdict: "correct",
      reason: `${DECISION_FILE} needs these fields filled in correctly: ${problems.join("; ")}.`,
    };
  }

  const recorded = input.variables?.order_id;
  if (decision.order_id !== recorded) {
    return {
      verdict: "correct",
      reason: `${DECISION_FILE} names order ${decision.order_id}, but this conversation is about ${recorded}.`,
    };
  }
  const isDeny = decision.decision === "deny";
  if (isDeny && decision.amount !== 0) {
    return { verdict: "correct", reason: "A deny must have amount 0." };
  }
  if (isDeny && input.to !== "closed") {
    return {
      verdict: "correct",
      reason: "A deny needs no approval: take the transition for a refund the policy does not allow.",
    };
  }
  if (!isDeny && input.to === "closed") {
    return {
      verdict: "correct",
      reason: `A ${decision.decision} needs a person's approval: take the transition to review instead.`,
    };
  }

  const ordersText = await readText(input.tools, ORDERS_FILE);
  if (ordersText === null) {
    throw new Error(`cannot read ${ORDERS_FILE}; the refund cannot be checked`);
  }
  const orders = JSON.parse(ordersText).orders ?? [];
  const order = orders.find((o) => o.id === decision.order_id);
  if (!order) {
    return { verdict: "veto", reason: `Order ${decision.order_id} is not in the order data; no refund can be proposed for it.` };
  }
  if (decision.amount > order.total) {
    return {
      verdict: "veto",
      reason: `The proposed ${decision.amount.toFixed(2)} EUR is more than the ${order.total.toFixed(2)} EUR paid for ${order.id}.`,
    };
  }

  return { verdict: "ok", reason: `${decision.decision} of ${decision.amount.toFixed(2)} EUR for ${order.id} is complete.` };
});

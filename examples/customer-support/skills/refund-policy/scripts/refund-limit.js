/**
 * Refund limit for one order
 *
 * Applies skills/refund-policy/assets/policy.md (sections 1 and 2) to a single
 * order and reports the largest refund the assistant may propose on its own.
 * Run it with archmax_run; it reads these keys from `args`:
 *
 * - order_total: number, what the customer paid in EUR (required, >= 0)
 * - customer_tier: "standard", "silver" or "gold" (unknown tiers count as standard)
 * - status: the order status from the order data
 * - return_window: "open" or "closed", read only for delivered orders
 *
 * How it decides: the status (and, for a delivered order, the return window)
 * gives the refundable share of the total, 1 or 0. The refundable amount is
 * share x total. The tier gives a ceiling (150, 300 or 600 EUR). The limit is
 * the smaller of the two, rounded to cents. When the refundable amount is above
 * the ceiling, `escalate` is true: the refund is allowed but a person must
 * propose it.
 *
 * It returns { eligible, share, cap, limit, escalate, basis }, where `basis` is
 * one sentence naming the rule applied. A missing or negative total returns
 * eligible false with a basis explaining the bad input; nothing is thrown.
 */

const TIER_CAPS = { standard: 150, silver: 300, gold: 600 };

const STATUS_RULES = {
  processing: { share: 1, basis: "Processing orders are cancelled and refunded in full." },
  delayed: { share: 1, basis: "Delayed orders are refunded in full if the customer stops waiting." },
  shipped: {
    share: 0,
    basis: "Orders in transit are not refunded yet; offer to wait or to refuse the parcel.",
  },
  cancelled: { share: 0, basis: "Cancelled orders were already refunded at cancellation." },
};

function refundLimit(input) {
  const total = Number(input.order_total);
  if (input.order_total === undefined || input.order_total === null || !Number.isFinite(total) || total < 0) {
    return {
      eligible: false,
      share: 0,
      cap: 0,
      limit: 0,
      escalate: false,
      basis: "order_total is missing or not a non-negative number; pass what the customer paid.",
    };
  }

  const tier = String(input.customer_tier ?? "standard").toLowerCase();
  const cap = TIER_CAPS[tier] ?? TIER_CAPS.standard;
  const status = String(input.status ?? "").toLowerCase();

  let rule = STATUS_RULES[status];
  if (status === "delivered") {
    const open = String(input.return_window ?? "").toLowerCase() === "open";
    rule = open
      ? { share: 1, basis: "Delivered within the 30-day return window: refundable in full for unused items." }
      : { share: 0, basis: "Delivered and the return window is closed: offer the warranty route instead." };
  }
  if (!rule) {
    rule = { share: 0, basis: `Unknown order status '${status}'; the policy allows no refund for it.` };
  }

  const refundable = Math.round(total * rule.share * 100) / 100;
  const limit = Math.min(refundable, cap);
  return {
    eligible: rule.share > 0,
    share: rule.share,
    cap,
    limit,
    escalate: refundable > cap,
    basis: rule.basis,
  };
}

const result = refundLimit(globalThis.args ?? {});
result;

//! Token usage: aggregation of `model-usage` events per session and the footer
//! line (cli digest §8).

use std::collections::HashMap;

use archmax_machine::model::PricingTable;
use archmax_machine::model::types::Usage as CallUsage;
use archmax_machine::{Envelope, Event};

use crate::style::Style;

/// Counters of one session.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tokens {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Cost in USD, when pricing is configured.
    pub cost: Option<f64>,
}

impl Tokens {
    /// True when every counter is zero.
    pub fn is_empty(&self) -> bool {
        self.input == 0 && self.output == 0 && self.cache_read == 0 && self.cache_write == 0
    }

    /// `in <n> · out <n> · cache r <n>/w <n>[ · $<cost>]`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "in {} · out {} · cache r {}/w {}",
            group(self.input),
            group(self.output),
            group(self.cache_read),
            group(self.cache_write)
        );
        if let Some(cost) = self.cost {
            line.push_str(&format!(" · ${}", cost_text(cost)));
        }
        line
    }

    /// The footer: a blank line, `tokens` (dim), five spaces, the line; "" when
    /// every counter is zero.
    pub fn footer(&self, style: &Style) -> String {
        if self.is_empty() {
            return String::new();
        }
        format!("\n{}     {}\n", style.dim("tokens"), self.line())
    }
}

/// Sums `model-usage` events per session. A call without a cost is priced
/// with the table (the `ARCHMAX_PRICE_*` entry), when there is one.
#[derive(Debug, Default)]
pub struct UsageTally {
    pricing: PricingTable,
    sessions: HashMap<String, Tokens>,
}

impl UsageTally {
    /// A tally pricing calls with `pricing`.
    pub fn new(pricing: PricingTable) -> Self {
        UsageTally {
            pricing,
            sessions: HashMap::new(),
        }
    }

    /// Counts the event if it is a `model-usage` event.
    pub fn on_event(&mut self, envelope: &Envelope) {
        let Event::ModelUsage {
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_creation_tokens,
            model,
            cost_usd,
            ..
        } = &envelope.event
        else {
            return;
        };
        let call = CallUsage {
            input_tokens: *input_tokens,
            output_tokens: *output_tokens,
            cache_read_tokens: *cache_read_tokens,
            cache_creation_tokens: *cache_creation_tokens,
        };
        let cost = cost_usd.or_else(|| {
            self.pricing
                .cost_usd(model.as_deref().unwrap_or_default(), &call)
        });
        let key = envelope.session_id.clone().unwrap_or_default();
        let t = self.sessions.entry(key).or_default();
        t.input += call.input_tokens;
        t.output += call.output_tokens;
        t.cache_read += call.cache_read_tokens;
        t.cache_write += call.cache_creation_tokens;
        if let Some(c) = cost {
            t.cost = Some(t.cost.unwrap_or(0.0) + c);
        }
    }

    /// The counters of one session.
    pub fn session(&self, id: &str) -> Tokens {
        self.sessions.get(id).copied().unwrap_or_default()
    }
}

/// en-US digit grouping: `20369` → `20,369`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 6 decimals below 0.01, else 4.
pub fn cost_text(cost: f64) -> String {
    if cost < 0.01 {
        format!("{cost:.6}")
    } else {
        format!("{cost:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_and_cost() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(20_369), "20,369");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(cost_text(0.001_234_5), "0.001234");
        assert_eq!(cost_text(0.5), "0.5000");
    }

    #[test]
    fn footer_only_when_something_counted() {
        let s = Style::new(false);
        assert_eq!(Tokens::default().footer(&s), "");
        let t = Tokens {
            input: 20_369,
            output: 12,
            cost: Some(0.02),
            ..Tokens::default()
        };
        assert_eq!(
            t.footer(&s),
            "\ntokens     in 20,369 · out 12 · cache r 0/w 0 · $0.0200\n"
        );
    }
}

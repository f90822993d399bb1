//! Spending caps: tokens and US dollars, per turn and per session. The workflow's author sets
//! them (`budget.maxTurnTokens`, `maxTurnCostUsd`, `maxSessionTokens`, `maxSessionCostUsd`),
//! the host sets a ceiling (`ARCHMAX_MAX_TURN_TOKENS`, … or `caps` of `createAgent`), and the
//! stricter of the two holds. A turn reaching one ends as `maxModelCalls` ends it (the budget
//! check in `turn/budget.rs`), before a model call that would start past it.

use archmax_spec::model::WorkflowBudget;

use crate::error::RunError;
use crate::state::Usage;

/// The host's ceilings; unset ones leave the workflow's caps (or none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpendCaps {
    /// Tokens (input + output) one turn may spend.
    pub turn_tokens: Option<u64>,
    /// US dollars one turn may spend.
    pub turn_cost_usd: Option<f64>,
    /// Tokens one session may spend over all its turns.
    pub session_tokens: Option<u64>,
    /// US dollars one session may spend over all its turns.
    pub session_cost_usd: Option<f64>,
}

/// The settings the host's ceilings are read from, each a `caps` option of the same meaning.
pub const CAP_VARS: [(&str, &str); 4] = [
    ("ARCHMAX_MAX_TURN_TOKENS", "turnTokens"),
    ("ARCHMAX_MAX_TURN_COST_USD", "turnCostUsd"),
    ("ARCHMAX_MAX_SESSION_TOKENS", "sessionTokens"),
    ("ARCHMAX_MAX_SESSION_COST_USD", "sessionCostUsd"),
];

impl SpendCaps {
    /// The ceilings `lookup` sets (`ARCHMAX_MAX_TURN_TOKENS`, …), each overridden by `host`'s.
    pub fn from_env(
        lookup: &dyn Fn(&str) -> Option<String>,
        host: SpendCaps,
    ) -> Result<SpendCaps, RunError> {
        let read = |var: &str| -> Result<Option<f64>, RunError> {
            let Some(raw) = lookup(var).filter(|r| !r.trim().is_empty()) else {
                return Ok(None);
            };
            match raw.trim().parse::<f64>() {
                Ok(n) if n.is_finite() && n > 0.0 => Ok(Some(n)),
                _ => Err(RunError::Settings(format!(
                    "Environment variable {var} must be a positive number, got: {raw}"
                ))),
            }
        };
        let tokens = |var: &str| -> Result<Option<u64>, RunError> {
            match read(var)? {
                None => Ok(None),
                Some(n) if n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 =>
                {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    Ok(Some(n as u64))
                }
                Some(_) => Err(RunError::Settings(format!(
                    "Environment variable {var} must be a whole number of tokens"
                ))),
            }
        };
        Ok(SpendCaps {
            turn_tokens: host.turn_tokens.or(tokens(CAP_VARS[0].0)?),
            turn_cost_usd: host.turn_cost_usd.or(read(CAP_VARS[1].0)?),
            session_tokens: host.session_tokens.or(tokens(CAP_VARS[2].0)?),
            session_cost_usd: host.session_cost_usd.or(read(CAP_VARS[3].0)?),
        })
    }

    /// The ceilings a host gave as numbers (JS `caps`): tokens must be whole.
    pub fn from_numbers(
        turn_tokens: Option<f64>,
        turn_cost_usd: Option<f64>,
        session_tokens: Option<f64>,
        session_cost_usd: Option<f64>,
    ) -> Result<SpendCaps, RunError> {
        let whole = |name: &str, n: Option<f64>| -> Result<Option<u64>, RunError> {
            match n {
                None => Ok(None),
                Some(n) if n.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(&n) =>
                {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    Ok(Some(n as u64))
                }
                Some(n) => Err(RunError::Options(format!(
                    "'caps.{name}' must be a positive whole number of tokens, got {n}"
                ))),
            }
        };
        let caps = SpendCaps {
            turn_tokens: whole("turnTokens", turn_tokens)?,
            turn_cost_usd,
            session_tokens: whole("sessionTokens", session_tokens)?,
            session_cost_usd,
        };
        caps.check()?;
        Ok(caps)
    }

    /// Refuses a host cap that is not positive (a whole number, for tokens).
    pub fn check(&self) -> Result<(), RunError> {
        let bad = |name: &str, what: &str| {
            Err(RunError::Options(format!("'caps.{name}' must be {what}")))
        };
        for (name, tokens) in [
            ("turnTokens", self.turn_tokens),
            ("sessionTokens", self.session_tokens),
        ] {
            if tokens == Some(0) {
                return bad(name, "a positive whole number of tokens");
            }
        }
        for (name, usd) in [
            ("turnCostUsd", self.turn_cost_usd),
            ("sessionCostUsd", self.session_cost_usd),
        ] {
            if usd.is_some_and(|n| !(n.is_finite() && n > 0.0)) {
                return bad(name, "a positive number of US dollars");
            }
        }
        Ok(())
    }
}

/// What a cap bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Turn,
    Session,
}

/// One cap in force: its limit and where it was set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cap {
    pub(crate) scope: Scope,
    /// US dollars, else tokens.
    pub(crate) usd: bool,
    pub(crate) limit: f64,
    /// Where the limit was set, as the refusal names it: `budget.maxTurnTokens`, or the
    /// host's setting.
    pub(crate) source: String,
}

impl Cap {
    /// What `usage` has spent of what this cap bounds.
    pub(crate) fn spent(&self, usage: &Usage) -> f64 {
        if self.usd {
            usage.cost_usd.unwrap_or(0.0)
        } else {
            usage.tokens() as f64
        }
    }

    fn amount(&self, n: f64) -> String {
        if self.usd {
            format!("${n:.4}")
        } else {
            format!("{n:.0} tokens")
        }
    }

    /// Why a turn that spent `spent` stops: names the cap, the spend and the limit.
    pub(crate) fn reason(&self, spent: f64) -> String {
        let (whose, what) = match (self.scope, self.usd) {
            (Scope::Turn, false) => ("turn", "token"),
            (Scope::Turn, true) => ("turn", "cost"),
            (Scope::Session, false) => ("session", "token"),
            (Scope::Session, true) => ("session", "cost"),
        };
        format!(
            "the {whose} reached its {what} cap ({}: {}): {} spent",
            self.source,
            self.amount(self.limit),
            self.amount(spent)
        )
    }
}

impl crate::Harness {
    /// Refuses a cap in US dollars when a model the workflow may call has no price: the cap
    /// could never be reached, and is refused rather than ignored.
    pub(crate) fn check_caps(&self) -> Result<(), RunError> {
        let Some(cap) = self.caps.iter().find(|c| c.usd) else {
            return Ok(());
        };
        let mut models: Vec<&str> = vec![self.default_model.as_str()];
        models.extend(self.spec.settings.as_ref().and_then(|s| s.model.as_deref()));
        models.extend(self.spec.states.values().filter_map(|s| s.model.as_deref()));
        let priced = |m: &str| {
            self.settings
                .pricing
                .as_ref()
                .is_some_and(|t| t.lookup(m).is_some())
        };
        match models.into_iter().find(|m| !priced(m)) {
            None => Ok(()),
            Some(model) => Err(RunError::Options(format!(
                "the cap {} is in US dollars, but model '{model}' has no price: set one (ARCHMAX_PRICE_INPUT and ARCHMAX_PRICE_OUTPUT, or the 'pricing' option), or cap tokens instead",
                cap.source
            ))),
        }
    }
}

/// The caps in force: for each of the four, the stricter of the workflow's and the host's.
pub(crate) fn effective(budget: Option<&WorkflowBudget>, host: &SpendCaps) -> Vec<Cap> {
    let wf = |f: fn(&WorkflowBudget) -> Option<f64>| budget.and_then(f);
    /// A cap's scope, whether in US dollars, the workflow's and the host's limits, and where
    /// each is set.
    type Slot = (
        Scope,
        bool,
        Option<f64>,
        Option<f64>,
        &'static str,
        (&'static str, &'static str),
    );
    let slots: [Slot; 4] = [
        (
            Scope::Turn,
            false,
            wf(|b| b.max_turn_tokens.map(|n| n as f64)),
            host.turn_tokens.map(|n| n as f64),
            "budget.maxTurnTokens",
            CAP_VARS[0],
        ),
        (
            Scope::Turn,
            true,
            wf(|b| b.max_turn_cost_usd),
            host.turn_cost_usd,
            "budget.maxTurnCostUsd",
            CAP_VARS[1],
        ),
        (
            Scope::Session,
            false,
            wf(|b| b.max_session_tokens.map(|n| n as f64)),
            host.session_tokens.map(|n| n as f64),
            "budget.maxSessionTokens",
            CAP_VARS[2],
        ),
        (
            Scope::Session,
            true,
            wf(|b| b.max_session_cost_usd),
            host.session_cost_usd,
            "budget.maxSessionCostUsd",
            CAP_VARS[3],
        ),
    ];
    slots
        .into_iter()
        .filter_map(|(scope, usd, workflow, host, wf_name, (var, option))| {
            let host_name = || format!("{var} / caps.{option}");
            let (limit, source) = match (workflow, host) {
                (Some(w), Some(h)) if h < w => (h, host_name()),
                (Some(w), _) => (w, wf_name.to_string()),
                (None, Some(h)) => (h, host_name()),
                (None, None) => return None,
            };
            Some(Cap {
                scope,
                usd,
                limit,
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stricter_cap_holds_and_says_where_it_was_set() {
        let budget = WorkflowBudget {
            max_model_calls: None,
            max_turn_tokens: Some(1000),
            max_turn_cost_usd: None,
            max_session_tokens: Some(5000),
            max_session_cost_usd: None,
        };
        let host = SpendCaps {
            turn_tokens: Some(2000),
            session_tokens: Some(4000),
            turn_cost_usd: Some(0.5),
            ..SpendCaps::default()
        };
        let caps = effective(Some(&budget), &host);
        let named: Vec<(&str, f64)> = caps.iter().map(|c| (c.source.as_str(), c.limit)).collect();
        assert_eq!(
            named,
            [
                ("budget.maxTurnTokens", 1000.0),
                ("ARCHMAX_MAX_TURN_COST_USD / caps.turnCostUsd", 0.5),
                ("ARCHMAX_MAX_SESSION_TOKENS / caps.sessionTokens", 4000.0),
            ]
        );
        assert_eq!(
            caps[0].reason(1234.0),
            "the turn reached its token cap (budget.maxTurnTokens: 1000 tokens): 1234 tokens spent"
        );
        assert_eq!(
            caps[1].reason(0.51234),
            "the turn reached its cost cap (ARCHMAX_MAX_TURN_COST_USD / caps.turnCostUsd: $0.5000): $0.5123 spent"
        );
        assert!(effective(None, &SpendCaps::default()).is_empty());
    }

    #[test]
    fn host_ceilings_come_from_the_settings_unless_the_host_sets_them() {
        let env = |k: &str| match k {
            "ARCHMAX_MAX_TURN_TOKENS" => Some("300".to_string()),
            "ARCHMAX_MAX_SESSION_COST_USD" => Some(" 2.5 ".to_string()),
            _ => None,
        };
        let caps = SpendCaps::from_env(
            &env,
            SpendCaps {
                turn_tokens: Some(100),
                ..SpendCaps::default()
            },
        )
        .expect("valid");
        assert_eq!(caps.turn_tokens, Some(100));
        assert_eq!(caps.session_cost_usd, Some(2.5));
        let bad = |k: &str| (k == "ARCHMAX_MAX_TURN_TOKENS").then(|| "1.5".to_string());
        assert_eq!(
            SpendCaps::from_env(&bad, SpendCaps::default())
                .err()
                .map(|e| e.to_string()),
            Some(
                "Environment variable ARCHMAX_MAX_TURN_TOKENS must be a whole number of tokens"
                    .to_string()
            )
            .map(|m| RunError::Settings(m).to_string())
        );
    }
}

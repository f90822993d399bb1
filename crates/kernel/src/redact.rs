//! Redaction of listings (`ls`, `glob`, `grep` results): lines owned by a skill
//! bundle or a mount the state cannot see are dropped, so a listing never
//! discloses what the state was not given.

use std::borrow::Cow;

use crate::Origin;
use crate::canonical::canonicalize;
use crate::policy::{Policy, StateRules};
use crate::zones::skill_of;

impl Policy {
    /// The listing as the model of `state` may see it; unchanged when nothing is
    /// hidden. Lifecycle listings are never redacted.
    pub fn redact_listing<'t>(&self, state: &str, origin: Origin, text: &'t str) -> Cow<'t, str> {
        if origin == Origin::Lifecycle {
            return Cow::Borrowed(text);
        }
        let Some(st) = self.state(state) else {
            return Cow::Borrowed(text);
        };
        let once = self.filter(text, |path| self.skill_hidden(st, path));
        let twice = self.filter(&once, |path| self.mount_hidden(st, path));
        match (&once, &twice) {
            (Cow::Borrowed(_), Cow::Borrowed(_)) => Cow::Borrowed(text),
            _ => Cow::Owned(twice.into_owned()),
        }
    }

    fn skill_hidden(&self, st: &StateRules, path: &str) -> bool {
        skill_of(&self.skills, &canonicalize(path))
            .is_some_and(|slug| !st.skills_enabled.iter().any(|s| s == slug))
    }

    fn mount_hidden(&self, st: &StateRules, path: &str) -> bool {
        let trimmed = path.trim_matches('/');
        let Some(name) = self.mounts.mount_of(trimmed) else {
            return false;
        };
        let denied = self
            .mounts_forbid_always
            .iter()
            .chain(&st.mounts_denied_here)
            .any(|m| m == name);
        denied || (self.mounts.is_governed(name) && !st.mounts_enabled.iter().any(|m| m == name))
    }

    /// The line algorithm: a path line's owner decides; continuation and blank
    /// lines follow the group they belong to.
    fn filter<'t>(&self, text: &'t str, hidden: impl Fn(&str) -> bool) -> Cow<'t, str> {
        let mut out: Vec<&str> = Vec::new();
        let mut suppressed = false;
        let mut dropped = false;
        for line in text.split('\n') {
            let blank = line.trim().is_empty();
            if blank {
                if !suppressed {
                    out.push(line);
                }
                continue;
            }
            if line.starts_with(char::is_whitespace) {
                if !suppressed {
                    out.push(line);
                } else {
                    dropped = true;
                }
                continue;
            }
            let token = line
                .trim()
                .split(|c: char| c.is_whitespace() || c == ':')
                .next()
                .unwrap_or_default();
            if hidden(token) {
                dropped = true;
                suppressed = true;
                if out.last().is_some_and(|l| l.trim().is_empty()) {
                    out.pop();
                }
            } else {
                suppressed = false;
                out.push(line);
            }
        }
        if dropped {
            Cow::Owned(out.join("\n"))
        } else {
            Cow::Borrowed(text)
        }
    }
}

//! Terminal styling: ANSI codes when color is on, plain text otherwise; icons
//! are the same either way.

/// ✔ done, passed.
pub const CHECK: &str = "✔";
/// ✖ error, failed.
pub const CROSS: &str = "✖";
/// ● in progress.
pub const DOT: &str = "●";
/// ○ pending, skipped.
pub const CIRCLE: &str = "○";
/// → transition.
pub const ARROW: &str = "→";
/// ◆ header.
pub const DIAMOND: &str = "◆";
/// › action.
pub const BULLET: &str = "›";
/// │ quoted agent text.
pub const QUOTE: &str = "│";
/// ⚠ warning.
pub const WARN: &str = "⚠";

/// Whether styled strings carry ANSI codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Color is on only when `NO_COLOR` is unset or empty and stderr is a TTY.
    /// This one decision covers stdout too.
    pub fn decide(no_color: Option<&str>, stderr_is_tty: bool) -> Self {
        Style {
            color: no_color.is_none_or(str::is_empty) && stderr_is_tty,
        }
    }

    /// A style with color forced on or off.
    pub fn new(color: bool) -> Self {
        Style { color }
    }

    /// Whether color is on.
    pub fn color(&self) -> bool {
        self.color
    }

    fn wrap(&self, code: u8, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Bold (1).
    pub fn bold(&self, t: &str) -> String {
        self.wrap(1, t)
    }
    /// Dim (2).
    pub fn dim(&self, t: &str) -> String {
        self.wrap(2, t)
    }
    /// Red (31).
    pub fn red(&self, t: &str) -> String {
        self.wrap(31, t)
    }
    /// Green (32).
    pub fn green(&self, t: &str) -> String {
        self.wrap(32, t)
    }
    /// Yellow (33).
    pub fn yellow(&self, t: &str) -> String {
        self.wrap(33, t)
    }
    /// Blue (34).
    pub fn blue(&self, t: &str) -> String {
        self.wrap(34, t)
    }
    /// Magenta (35).
    pub fn magenta(&self, t: &str) -> String {
        self.wrap(35, t)
    }
    /// Cyan (36).
    pub fn cyan(&self, t: &str) -> String {
        self.wrap(36, t)
    }
    /// Gray (90).
    pub fn gray(&self, t: &str) -> String {
        self.wrap(90, t)
    }
}

/// The wordmark "archmax harness", four rows of at most 80 columns.
const WORDMARK: [&str; 4] = [
    r"                 __                          __",
    r"  ___ _________ / /  __ _  ___ __ __  __   / /  ___ ________  ___ ___ ___",
    r" / _ `/ __/ __// _ \/  ' \/ _ `/\ \ / /   / _ \/ _ `/ __/ _ \/ -_|_-<(_-<",
    r" \_,_/_/  \__//_//_/_/_/_/\_,_//_\_\     /_//_/\_,_/_/ /_//_/\__/___/___/",
];

/// Whether the banner shows: `ARCHMAX_CLI_NO_BANNER` unset or empty, and stderr a TTY.
pub fn banner_enabled(no_banner: Option<&str>, stderr_is_tty: bool) -> bool {
    no_banner.is_none_or(str::is_empty) && stderr_is_tty
}

/// The banner block: a newline, the wordmark, a newline; all of it cyan.
pub fn banner(style: &Style) -> String {
    let mut block = String::from("\n");
    for row in WORDMARK {
        block.push_str(row);
        block.push('\n');
    }
    format!("{}\n", style.cyan(&block))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_needs_a_tty_and_no_no_color() {
        assert!(Style::decide(None, true).color());
        assert!(Style::decide(Some(""), true).color());
        assert!(!Style::decide(Some("1"), true).color());
        assert!(!Style::decide(None, false).color());
    }

    #[test]
    fn codes_nest_by_wrapping_again() {
        let s = Style::new(true);
        assert_eq!(s.green(&s.bold("ok")), "\x1b[32m\x1b[1mok\x1b[0m\x1b[0m");
        assert_eq!(Style::new(false).red("x"), "x");
    }

    #[test]
    fn banner_rules() {
        assert!(banner_enabled(None, true));
        assert!(banner_enabled(Some(""), true));
        assert!(!banner_enabled(Some("1"), true));
        assert!(!banner_enabled(None, false));
        assert!(WORDMARK.iter().all(|r| r.chars().count() <= 80));
        let plain = banner(&Style::new(false));
        assert!(plain.starts_with('\n') && plain.ends_with("\n\n"));
        assert!(banner(&Style::new(true)).starts_with("\x1b[36m\n"));
    }
}
